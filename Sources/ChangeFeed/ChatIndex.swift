import ChatModel

/// The live chat lists: every chat by id, the order of each view (`main`, `archive`, each whole
/// and unread-only; docs/PROTOCOL.md, Values; docs/PROTOCOL.md, The live feed) with a chat's index and the chat at an index in O(log n), and
/// each list's size and unread counters, kept up to date per change in O(1).
public struct ChatIndex {
    @usableFromInline var chatsByID: ChatTable
    /// One ordered set per view, at `slot(of:)`.
    @usableFromInline var orders: [RankedSet<ChatOrderKey>]
    @usableFromInline var listCounters: [ListCounters]

    @inlinable
    static func slot(of view: ChatListView) -> Int { (view.list == .main ? 0 : 2) + (view.unreadOnly ? 1 : 0) }

    @inlinable
    static func slot(of list: ChatList) -> Int { list == .main ? 0 : 1 }

    /// An index of `chats`, which must have distinct ids.
    ///
    /// - Complexity: O(n) when each list's chats come in list order (as the store loads them),
    ///   O(n log n) otherwise. The index takes over `chats`' storage (no copy of a chat) when the
    ///   caller holds no other reference to it.
    public init(chats: [Chat]) {
        chatsByID = ChatTable(chats: chats)
        // One pass over the chats in place, reading only the fields each view needs: iterating
        // copies of the chats retained every string of every chat, once per view (40% of a
        // start-up at 1,000,000 chats).
        var keys = [[ChatOrderKey]](repeating: [], count: ChatListView.all.count)
        var listCounters = [ListCounters(), ListCounters()]
        chats.withUnsafeBufferPointer { chats in
            var counts = [Int](repeating: 0, count: keys.count)
            for i in chats.indices {
                counts[Self.slot(of: ChatListView(list: chats[i].list))] += 1
                if chats[i].unread > 0 { counts[Self.slot(of: ChatListView(list: chats[i].list, unreadOnly: true))] += 1 }
            }
            for slot in keys.indices { keys[slot].reserveCapacity(counts[slot]) }
            for i in chats.indices {
                listCounters[Self.slot(of: chats[i].list)].add(unread: chats[i].unread, muted: chats[i].muted)
                let key = ChatOrderKey(pinOrder: chats[i].pinOrder, lastMessageDate: chats[i].lastMessageDate, id: chats[i].id)
                keys[Self.slot(of: ChatListView(list: chats[i].list))].append(key)
                if chats[i].unread > 0 { keys[Self.slot(of: ChatListView(list: chats[i].list, unreadOnly: true))].append(key) }
            }
        }
        self.listCounters = listCounters
        orders = []
        for slot in keys.indices {
            if !zip(keys[slot], keys[slot].dropFirst()).allSatisfy({ $0 < $1 }) { keys[slot].sort() }
            orders.append(RankedSet(sorted: keys[slot]))
            keys[slot] = []
        }
    }

    /// Number of chats in every list.
    @inlinable
    public var count: Int { chatsByID.count }

    /// Number of rows of `view`. O(1).
    @inlinable
    public func count(of view: ChatListView) -> Int { withOrder(of: view) { $0.count } }

    /// Calls `body` with the order of `view` in place: reading `orders[slot]` would copy the set,
    /// retaining and releasing each of its arrays, on every lookup.
    @inlinable
    func withOrder<Result>(of view: ChatListView, _ body: (borrowing RankedSet<ChatOrderKey>) -> Result) -> Result {
        orders.withUnsafeBufferPointer { body($0[Self.slot(of: view)]) }
    }

    /// The size and unread counters of `list`. O(1).
    @inlinable
    public func counters(of list: ChatList) -> ListCounters { listCounters[Self.slot(of: list)] }

    /// The chat with `id`, if any. O(1).
    @inlinable
    public func chat(id: String) -> Chat? { chatsByID.chat(id: id) }

    /// The index of the chat with `id` in `view`, if it is one of its rows. O(log n).
    @inlinable
    public func index(of id: String, in view: ChatListView = .main) -> Int? {
        guard let chat = chatsByID.chat(id: id), view.contains(chat) else { return nil }
        return withOrder(of: view) { $0.rank(of: chat.orderKey) }
    }

    /// How many rows of `view` come before `key` (`key` need not be present). O(log n).
    @inlinable
    public func rank(of key: ChatOrderKey, in view: ChatListView = .main) -> Int {
        withOrder(of: view) { $0.rank(of: key) }
    }

    /// The rows of `view` at indices `start ..< start + count` (fewer at the end of the list).
    ///
    /// - Complexity: O(log n + count).
    public func chats(from start: Int, count: Int, in view: ChatListView = .main) -> [Chat] {
        keys(from: start, count: count, in: view).map { chatsByID.chat(id: $0.id)! }
    }

    /// The order key of the row of `view` at `index`, which must be in `0 ..< count(of: view)`. O(log n).
    func key(at index: Int, in view: ChatListView) -> ChatOrderKey {
        withOrder(of: view) { $0.element(at: index) }
    }

    /// The order keys of `view` at indices `start ..< start + count` (fewer at the end).
    func keys(from start: Int, count: Int, in view: ChatListView) -> [ChatOrderKey] {
        withOrder(of: view) { order in
            guard start < order.count, count > 0 else { return [] }
            return order.elements(from: max(0, start), count: count)
        }
    }

    /// Applies one committed change and returns the chat as it was before (nil if it was absent).
    ///
    /// - Complexity: O(log n) per view the chat is or was a row of.
    @discardableResult
    public mutating func apply(_ change: ChatChange) -> Chat? {
        let current = change.chat
        let previous: Chat?
        if let current {
            previous = chatsByID.update(current)
        } else {
            previous = chatsByID.remove(id: change.chatID)
        }
        let previousKey = previous?.orderKey
        let currentKey = current?.orderKey
        let keyChanged = previousKey != currentKey
        for view in ChatListView.all {
            let was = previous.map(view.contains) ?? false
            let now = current.map(view.contains) ?? false
            guard was || now else { continue }
            let slot = Self.slot(of: view)
            // The new key first: a chat that moves within a list of one never empties its block,
            // which would be freed and a new one allocated at once.
            if now, !was || keyChanged { orders[slot].insert(currentKey!) }
            if was, !now || keyChanged { orders[slot].remove(previousKey!) }
        }
        if let previous { listCounters[Self.slot(of: previous.list)].add(previous, sign: -1) }
        if let current { listCounters[Self.slot(of: current.list)].add(current) }
        return previous
    }
}
