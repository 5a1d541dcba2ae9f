import ChatModel
import SQLite

/// What a post to a chat starts from (`PreparedStatements.historyEnds`): its newest message
/// (`head`), its last message not deleted, and the order date when the two are one.
struct PostStart {
    var head: Int64?
    var last: Int64?
    /// The newest message's sentAt when it is the chat's last message (a membership's order
    /// date), or the chat's creation when it has no messages; nil when unknown (a chat without
    /// members).
    var newestDate: Int64?

    init(_ row: Row) {
        (head, last) = (row[0], row[1])
        if head == last { newestDate = row[2] }
    }

    /// A chat with members after a post in order: the post is its newest and last message.
    init(postInOrder seq: Int64, sentAt: Int64) {
        (head, last, newestDate) = (seq, seq, sentAt)
    }
}

/// The history's ends of the chats this connection posted to in order, so that the next post in
/// order to one of them reads none: the `historyEnds` query was a fifth of a post's statements at
/// 10,000 chats. An entry is what that query would read, since only the posts that wrote it
/// changed those rows. Entries are read and written only inside a group's transaction
/// (`ChatDatabase.apply(_:lockLimit:)`, between `beginGroup` and `endGroup`), which starts with
/// none when another connection committed (`dataVersion()`, which a reopened file changes too)
/// or this one wrote outside a group (`totalChangedRowCount`); any event but a post, an event
/// refused, and a group that fails empty it until the next group.
struct PostStartCache {
    /// At most this many chats, emptied when full: at 1,000,000 chats few posts find one.
    static let capacity = 16_384

    private var byChat: [String: PostStart] = [:]
    /// True inside a group's transaction until something but a post in order wrote.
    private var isOpen = false
    /// `dataVersion()` read in the last group's transaction, and `totalChangedRowCount` after
    /// it: what the next group must find again to keep the entries.
    private var dataVersion: Int64?
    private var totalChanges: Int64 = 0

    /// What the last post in order to `chat` left, within a group.
    subscript(chat: String) -> PostStart? { isOpen ? byChat[chat] : nil }

    /// At the start of a group's transaction: keeps the entries only when no other write came
    /// since the last group ended.
    mutating func beginGroup(dataVersion: Int64, totalChanges: Int64) {
        if dataVersion != self.dataVersion || totalChanges != self.totalChanges { empty() }
        self.dataVersion = dataVersion
        isOpen = true
    }

    /// After a group committed.
    mutating func endGroup(totalChanges: Int64) {
        self.totalChanges = totalChanges
        isOpen = false
    }

    /// Within a group: `chat`'s ends after a post in order.
    mutating func remember(_ start: PostStart, of chat: String) {
        guard isOpen else { return }
        if byChat.count >= Self.capacity, byChat[chat] == nil { byChat.removeAll(keepingCapacity: true) }
        byChat[chat] = start
    }

    mutating func forget(_ chat: String) { byChat[chat] = nil }

    /// Forgets every chat, and the group: nothing is read or kept until the next group begins.
    mutating func empty() {
        if !byChat.isEmpty { byChat.removeAll(keepingCapacity: true) }
        dataVersion = nil
        isOpen = false
    }
}
