import ChatModel

/// A post the store applied in order — after its chat's newest message, as nearly every post
/// is — which changed nothing of its chat but what this holds: the chat's last message and order
/// date, and each member's unread count and revision (`apply(to:seenBy:)`).
public struct PostInOrder: Sendable, Hashable {
    public let chatID: String
    public let message: LastMessage
    /// Its change-log entry, each member's new revision.
    public let sequence: Int64

    /// Makes `chat`, as its member `user` saw it just before the post, the chat as `user` sees it
    /// after: what `postToMembers` writes of a post in order (the post is the chat's last
    /// message; the sender has read the chat through it, every other member has one more unread;
    /// every member gets a new revision).
    public func apply(to chat: inout Chat, seenBy user: String) {
        chat.lastMessage = message
        chat.lastMessageDate = message.sentAt
        chat.unread = user == message.sender ? 0 : chat.unread + 1
        chat.revision = sequence
    }
}

/// Every change one group of events made, when each was a post in order (`PostInOrder`): what
/// the change log holds after `after` through `through`, known without reading it.
///
/// A reader that keeps its users' lists from the change log (the engine) catches up on its own
/// group with it, from the chats as its lists hold them; the change log stays the record for
/// other processes and for any other group.
public struct OwnPosts: Sendable {
    /// The latest change-log sequence before the group.
    public let after: Int64
    /// The group's posts, in commit order: each entry after `after` through `through`, one each.
    public let posts: [PostInOrder]

    /// The latest change-log sequence after the group: one entry a post.
    public var through: Int64 { after + Int64(posts.count) }

    /// What `changes(after: after, user: user)` reads after the group, for the chats `user` is a
    /// member of: each chat the posts changed, once, as `user` sees it after them, in the order
    /// of its latest post. `before` gives a chat as `user` saw it before the group (nil when not
    /// a member: a post changes nothing for a non-member).
    ///
    /// - Complexity: O(posts), plus a call of `before` per chat posted to.
    public func changes(seenBy user: String, before: (String) -> Chat?) -> [ChatChange] {
        // Each chat posted to, in the order of its first post, after all its posts (nil: not a
        // member), and the post of each slot; one search of `slots` a post.
        var slots: [String: Int] = [:]
        slots.reserveCapacity(posts.count)
        var chats: [Chat?] = []
        var latestPost: [Int] = []
        var slotOfPost: [Int] = []
        slotOfPost.reserveCapacity(posts.count)
        for (position, post) in posts.enumerated() {
            let slot: Int
            if let known = slots[post.chatID] {
                slot = known
                latestPost[slot] = position
            } else {
                slot = chats.count
                slots[post.chatID] = slot
                chats.append(before(post.chatID))
                latestPost.append(position)
            }
            slotOfPost.append(slot)
            if chats[slot] != nil { post.apply(to: &chats[slot]!, seenBy: user) }
        }
        // In the order of each chat's latest post.
        var changes: [ChatChange] = []
        changes.reserveCapacity(chats.count)
        for (position, post) in posts.enumerated() {
            let slot = slotOfPost[position]
            guard latestPost[slot] == position, let chat = chats[slot].take() else { continue }
            changes.append(ChatChange(chatID: post.chatID, chat: chat))
        }
        return changes
    }
}

/// The posts of the group being applied, recorded while every change-log entry it wrote is a
/// post in order.
struct OwnPostRecorder {
    let after: Int64
    var posts: [PostInOrder] = []

    /// The group's posts, when every entry after `after` through `latest` is one of them.
    func finish(latest: Int64) -> OwnPosts? {
        guard latest - after == Int64(posts.count) else { return nil }
        return OwnPosts(after: after, posts: posts)
    }
}

extension ChatDatabase {
    /// Starts recording a group's posts when `recordsOwnPosts`. Not with `savepoints`: an event
    /// undone by its savepoint would have been recorded (rare: a group is applied so only after
    /// one of its events was refused once it had written).
    func beginRecordingOwnPosts(unless savepoints: Bool) throws {
        ownPostRecorder = recordsOwnPosts && !savepoints ? OwnPostRecorder(after: try latestChangeSequence()) : nil
    }

    /// Records a post in order, when the group is recorded. (Not inlined: in `post` it cost a
    /// malloc a post even when nothing is recorded.)
    @inline(never)
    func recordPostInOrder(_ message: Message, sequence: Int64) {
        guard ownPostRecorder != nil else { return }
        ownPostRecorder!.posts.append(PostInOrder(
            chatID: message.chat,
            message: LastMessage(id: message.id, sender: message.sender, text: message.text, sentAt: message.sentAt),
            sequence: sequence))
    }

    /// Ends the group's recording, just before its commit: its posts, when they are all its
    /// change-log entries (`ownPosts` takes them once the group committed).
    func finishRecordingOwnPosts() throws -> OwnPosts? {
        defer { ownPostRecorder = nil }
        guard let recorder = ownPostRecorder else { return nil }
        return recorder.finish(latest: try latestChangeSequence())
    }
}
