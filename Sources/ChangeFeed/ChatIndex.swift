import ChatModel

/// The live chat list: every chat by id, and their order (SPEC §2), with a chat's index and the
/// chat at an index in O(log n).
public struct ChatIndex {
    @usableFromInline var chatsByID: [String: Chat]
    @usableFromInline var order: RankedSet<ChatOrderKey>

    /// An index of `chats`, which must have distinct ids.
    ///
    /// - Complexity: O(n) when `chats` is already in list order (as the store loads it),
    ///   O(n log n) otherwise.
    public init(chats: [Chat]) {
        chatsByID = Dictionary(minimumCapacity: chats.count)
        for chat in chats { chatsByID[chat.id] = chat }
        var keys = chats.map(\.orderKey)
        if !zip(keys, keys.dropFirst()).allSatisfy({ $0 < $1 }) { keys.sort() }
        order = RankedSet(sorted: keys)
    }

    /// Number of chats.
    @inlinable
    public var count: Int { order.count }

    /// The chat with `id`, if any. O(1).
    @inlinable
    public func chat(id: String) -> Chat? { chatsByID[id] }

    /// The index of the chat with `id` in the list, if any. O(log n).
    @inlinable
    public func index(of id: String) -> Int? {
        guard let chat = chatsByID[id] else { return nil }
        return order.rank(of: chat.orderKey)
    }

    /// How many chats come before `key` in the list (`key` need not be present). O(log n).
    @inlinable
    public func rank(of key: ChatOrderKey) -> Int { order.rank(of: key) }

    /// The chats at indices `start ..< start + count` (fewer at the end of the list).
    ///
    /// - Complexity: O(log n + count).
    public func chats(from start: Int, count: Int) -> [Chat] {
        guard start < self.count, count > 0 else { return [] }
        return order.elements(from: start, count: count).map { chatsByID[$0.id]! }
    }

    /// The order keys at indices `start ..< start + count` (fewer at the end of the list).
    func keys(from start: Int, count: Int) -> [ChatOrderKey] {
        guard start < self.count, count > 0 else { return [] }
        return order.elements(from: max(0, start), count: count)
    }

    /// Applies one committed change and returns the chat as it was before (nil if it was absent).
    ///
    /// - Complexity: O(log n).
    @discardableResult
    public mutating func apply(_ change: ChatChange) -> Chat? {
        let previous = chatsByID[change.chatID]
        if let previous, previous.orderKey != change.chat?.orderKey {
            order.remove(previous.orderKey)
        }
        if let chat = change.chat {
            chatsByID[change.chatID] = chat
            if previous?.orderKey != chat.orderKey { order.insert(chat.orderKey) }
        } else {
            chatsByID[change.chatID] = nil
        }
        return previous
    }
}
