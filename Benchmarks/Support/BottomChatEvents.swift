import ChatModel

/// The events of the "bottom chat bumped to the top" feed benchmarks and of `FeedProbe`: the
/// bottom chat's next message, made from a copy of every chat of the feed (chat i at i).
///
/// Chat i is at the bottom after chats i + 1 … n − 1 were bumped in turn, so the bottom is chat
/// n − 1, n − 2, … and again n − 1 after n events. Making an event thus reads one cold chat and
/// nothing of the feed, as a store's change would: making them alone is the baseline to subtract.
public struct BottomChatEvents {
    /// Every chat as the feed has it, chat i at i.
    public private(set) var chats: [Chat]
    /// The last message date given so far; each event's is one more.
    public var now: Int64
    /// The chat at the bottom of the list.
    public private(set) var bottom: Int

    /// Events for a feed of `chats` (in list order, the oldest last) whose newest date is `now`.
    public init(chats: [Chat], now: Int64) {
        self.chats = chats
        self.now = now
        bottom = chats.count - 1
    }

    /// The bottom chat's next message as a change, made but not applied. The next call makes the
    /// next bottom chat's.
    public mutating func next() -> [ChatChange] {
        now += 1
        let now = self.now, bottom = self.bottom
        let changed = chats.withUnsafeMutableBufferPointer { chats in
            chats[bottom].lastMessageDate = now
            chats[bottom].lastMessage = LastMessage(id: "m\(now)", sender: "ann", text: "hi", sentAt: now)
            chats[bottom].unread += 1
            chats[bottom].revision += 1
            return chats[bottom]
        }
        self.bottom = bottom == 0 ? chats.count - 1 : bottom - 1
        return [ChatChange(chatID: changed.id, chat: changed)]
    }
}
