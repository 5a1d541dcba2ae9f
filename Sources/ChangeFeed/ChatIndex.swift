import ChatModel

/// The live chat lists: every chat by id, the order of each view (`main`, `archive`, each whole
/// and unread-only; docs/PROTOCOL.md, Values; docs/PROTOCOL.md, The live feed) with a chat's index and the chat at an index in O(log n), and
/// each list's size and unread counters, kept up to date per change in O(1).
///
/// An index loaded without its chats' content (`init(chats:content:)` with a source) reads a
/// chat's content from that source when it hands the chat out, until a change brings the chat
/// whole (or `chatsLoadingContent` keeps what it read).
public struct ChatIndex {
    @usableFromInline var chatsByID: ChatTable
    /// Where chats kept without their content read it; nil when every chat has its content.
    @usableFromInline var content: ChatContentSource?
    /// One ordered set per view, at `slot(of:)`.
    @usableFromInline var orders: [RankedSet<ChatOrderKey>]
    @usableFromInline var listCounters: [ListCounters]

    @inlinable
    static func slot(of view: ChatListView) -> Int { (view.list == .main ? 0 : 2) + (view.unreadOnly ? 1 : 0) }

    /// Whether a chat in `list` (nil: none) with `unread` unread messages is a row of the view at
    /// `slot` (`slot(of:)` inverted: main, main unread-only, archive, archive unread-only).
    @inlinable
    static func view(at slot: Int, holds list: ChatList?, unread: Int64) -> Bool {
        list == (slot < 2 ? .main : .archive) && (slot % 2 == 0 || unread > 0)
    }

    @inlinable
    static func slot(of list: ChatList) -> Int { list == .main ? 0 : 1 }

    /// An index of `chats`, which must have distinct ids. With `content`, the chats come without
    /// their content (`title`, `createdAt` and `lastMessage` are read from `content` when a chat
    /// is handed out); without, whole.
    ///
    /// - Complexity: O(n) when each list's chats come in list order (as the store loads them),
    ///   O(n log n) otherwise. The index takes over `chats`' storage (no copy of a chat) when the
    ///   caller holds no other reference to it.
    public init(chats: [Chat], content: ChatContentSource? = nil) {
        chatsByID = ChatTable(chats: chats, withContent: content == nil)
        self.content = content
        // One pass over the chats in place, reading only the fields each view needs: iterating
        // copies of the chats retained every string of every chat, once per view (40% of a
        // start-up at 1,000,000 chats). Each view's keys go straight into its ordered set when
        // they come in its order, as the store's load gives them (`RankedSet.SortedBuilder`: a
        // buffer of them first was 16,000 of the 40,000 page faults of a start-up at 1,000,000
        // chats); a view whose keys do not is sorted in a buffer of their exact number and moved
        // from it into its set (`RankedSet(movingSorted:)`: copying them there and destroying the
        // array retained and released each id).
        var listCounters = [ListCounters(), ListCounters()]
        var orders: [RankedSet<ChatOrderKey>] = []
        orders.reserveCapacity(ChatListView.all.count)
        chats.withUnsafeBufferPointer { chats in
            func key(at i: Int) -> ChatOrderKey {
                ChatOrderKey(pinOrder: chats[i].pinOrder, lastMessageDate: chats[i].lastMessageDate, id: chats[i].id)
            }
            var counts = [Int](repeating: 0, count: ChatListView.all.count)
            for i in chats.indices {
                counts[Self.slot(of: ChatListView(list: chats[i].list))] += 1
                if chats[i].unread > 0 { counts[Self.slot(of: ChatListView(list: chats[i].list, unreadOnly: true))] += 1 }
            }
            // (The builders on the stack: at gateway sizes a user's index is a few hundred bytes,
            // and idle connections measured a few dozen bytes more each with the builders in a
            // heap array: Benchmarks/Results/daemon.md, 2026-12-06 22:35–22:43.)
            withUnsafeTemporaryAllocation(of: RankedSet<ChatOrderKey>.SortedBuilder.self, capacity: counts.count) { builders in
                for slot in counts.indices { (builders.baseAddress! + slot).initialize(to: .init(count: counts[slot])) }
                defer { _ = builders.deinitialize() }
                for i in chats.indices {
                    listCounters[Self.slot(of: chats[i].list)].add(unread: chats[i].unread, muted: chats[i].muted)
                    let key = key(at: i)
                    if chats[i].unread > 0 { builders[Self.slot(of: ChatListView(list: chats[i].list, unreadOnly: true))].append(key) }
                    builders[Self.slot(of: ChatListView(list: chats[i].list))].append(key)
                }
                for slot in counts.indices {
                    if let built = builders[slot].finish() {
                        orders.append(built)
                        continue
                    }
                    // Not in the view's order: its keys sorted in a buffer, then moved into its set.
                    var keys = UnsafeMutableBufferPointer<ChatOrderKey>.allocate(capacity: counts[slot])
                    var filled = 0
                    for i in chats.indices where Self.view(at: slot, holds: chats[i].list, unread: chats[i].unread) {
                        (keys.baseAddress! + filled).initialize(to: key(at: i))
                        filled += 1
                    }
                    keys.sort()
                    orders.append(RankedSet(movingSorted: keys))
                    keys.deallocate()
                }
            }
        }
        self.listCounters = listCounters
        self.orders = orders
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

    /// The chat with `id`, if any, whole (its content read from the content source when the
    /// index does not have it). O(1), plus one read of the source without the content.
    public func chat(id: String) -> Chat? {
        guard let slot = chatsByID.slot(of: id) else { return nil }
        guard !chatsByID.hasContent[slot], let content else { return chatsByID.chats[slot] }
        var chats = [chatsByID.chats[slot]]
        _ = content.loadContent(of: &chats)
        return chats[0]
    }

    /// The chat with `id` as the index keeps it: its order key, counters and revision always,
    /// its content only when the index has it. O(1).
    @inlinable
    func storedChat(id: String) -> Chat? { chatsByID.chat(id: id) }

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

    /// The rows of `view` at indices `start ..< start + count` (fewer at the end of the list),
    /// whole (the content the index does not have is read from the content source, at once).
    ///
    /// - Complexity: O(log n + count), plus one read of the source for the rows without content.
    public func chats(from start: Int, count: Int, in view: ChatListView = .main) -> [Chat] {
        rows(from: start, count: count, in: view).chats
    }

    /// `chats(from:count:in:)`, keeping the content read, so that the next snapshot of these rows
    /// reads nothing.
    ///
    /// - Complexity: O(log n + count), plus one read of the source for the rows without content.
    mutating func chatsLoadingContent(from start: Int, count: Int, in view: ChatListView) -> [Chat] {
        let (chats, read) = rows(from: start, count: count, in: view)
        for (position, slot) in read { chatsByID.setContent(slot: slot, chats[position]) }
        return chats
    }

    /// The chats with `ids`, which must be in the index, whole, keeping the content read.
    ///
    /// - Complexity: O(ids), plus one read of the source for the chats without content.
    mutating func chatsLoadingContent(ids: [String]) -> [Chat] {
        let (chats, read) = wholeChats(ids)
        for (position, slot) in read { chatsByID.setContent(slot: slot, chats[position]) }
        return chats
    }

    /// The revision of the chat with `id`, read in place (the chat is not copied). O(1).
    func revision(of id: String) -> Int64? {
        chatsByID.slot(of: id).map { chatsByID.chats[$0].revision }
    }

    /// The rows of `view` at `start ..< start + count`, whole, and those whose content was read
    /// (their positions among them and their slots in `chatsByID`; none when a read failed).
    private func rows(
        from start: Int, count: Int, in view: ChatListView
    ) -> (chats: [Chat], read: [(position: Int, slot: Int)]) {
        wholeChats(keys(from: start, count: count, in: view).lazy.map(\.id))
    }

    /// The chats with `ids`, whole (see `rows(from:count:in:)`).
    private func wholeChats(
        _ ids: some Collection<String>
    ) -> (chats: [Chat], read: [(position: Int, slot: Int)]) {
        var chats: [Chat] = []
        chats.reserveCapacity(ids.count)
        var missing: [(position: Int, slot: Int)] = []
        for id in ids {
            let slot = chatsByID.slot(of: id)!
            if !chatsByID.hasContent[slot] { missing.append((chats.count, slot)) }
            chats.append(chatsByID.chats[slot])
        }
        guard let content, !missing.isEmpty else { return (chats, []) }
        var read = missing.map { chats[$0.position] }
        let complete = content.loadContent(of: &read)
        for (index, row) in missing.enumerated() { chats[row.position] = read[index] }
        return (chats, complete ? missing : [])
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
        withUnsafePointer(to: change) { applyKeepingContent($0).previous?.chat }
    }

    /// `apply(_:)`, which also tells whether the chat as it was had its content (see
    /// `ChatContentSource`), and where the change moved it in each view (`ChangeRanks`).
    @discardableResult
    mutating func applyKeepingContent(_ change: UnsafePointer<ChatChange>) -> AppliedChange {
        // The fields each view needs, read once, where the change holds them, and the chat
        // copied once, into the table. A `ChatChange` passed by value was copied whole from the
        // caller's array (its id too); a `Chat?` copied, bound or destroyed goes through its
        // type's value witnesses (a chat is too large to be copied inline): a few hundred
        // instructions each, 400 an event here (Benchmarks/README.md, 2026-12-01).
        let current = change.chat
        let currentKey = current?.pointee.orderKey
        let currentList = current?.pointee.list, currentUnread = current?.pointee.unread ?? 0
        let currentMuted = current?.pointee.muted ?? false
        let replaced: ChatTable.StoredChat?
        if let current {
            replaced = chatsByID.update(current.pointee)
        } else {
            replaced = chatsByID.remove(id: change.pointee.chatID)
        }
        let previousKey = replaced?.chat.orderKey
        let keyChanged = previousKey != currentKey
        let previousList = replaced?.chat.list, previousUnread = replaced?.chat.unread ?? 0
        var ranks = ChangeRanks()
        for slot in 0..<orders.count {
            let was = Self.view(at: slot, holds: previousList, unread: previousUnread)
            let now = Self.view(at: slot, holds: currentList, unread: currentUnread)
            guard was || now else { continue }
            guard !was || !now || keyChanged else { continue }
            // The new key first: a chat that moves within a list of one never empties its block,
            // which would be freed and a new one allocated at once. Each reports its rank, and
            // each rank is corrected for the other key, present at the time.
            let inserted = now ? orders[slot].insertReportingRank(currentKey!) : nil
            let removed = was ? orders[slot].removeReportingRank(previousKey!) : nil
            guard now == (inserted != nil), was == (removed != nil) else { continue }
            ranks.set(
                slot: slot,
                old: removed.map { $0 - (inserted != nil && currentKey! < previousKey! ? 1 : 0) },
                new: inserted.map { $0 - (removed != nil && previousKey! < currentKey! ? 1 : 0) })
        }
        if let previousList {
            listCounters[Self.slot(of: previousList)].add(unread: previousUnread, muted: replaced!.chat.muted, sign: -1)
        }
        if let currentList { listCounters[Self.slot(of: currentList)].add(unread: currentUnread, muted: currentMuted) }
        return AppliedChange(previous: replaced, ranks: ranks, list: currentList, unread: currentUnread)
    }
}

extension UnsafePointer<ChatChange> {
    /// The change's chat where it is, nil when the change removes the chat.
    var chat: UnsafePointer<Chat>? {
        // The offset computed once: `pointer(to:)` evaluated its key path each time.
        (UnsafeRawPointer(self) + Self.chatOffset).assumingMemoryBound(to: Chat?.self).chat
    }

    private static let chatOffset = MemoryLayout<ChatChange>.offset(of: \.chat)!
}

extension UnsafePointer<Chat?> {
    /// The chat this optional holds, where it is; nil when it holds none.
    ///
    /// An optional's payload is stored at its start (a single-payload enum's layout), so the
    /// address of a `Chat?` that holds a chat is the address of that chat.
    var chat: UnsafePointer<Chat>? {
        // A field read through the optional, not the optional compared with nil (which copied it).
        guard pointee?.revision != nil else { return nil }
        return UnsafeRawPointer(self).assumingMemoryBound(to: Chat.self)
    }
}

/// What `ChatIndex.applyKeepingContent` did: the chat as it was (and whether it had its
/// content), and its ranks; the list and unread count of the chat now (nil and 0 when it was
/// removed), which the caller reads from here rather than from the change.
struct AppliedChange {
    var previous: ChatTable.StoredChat?
    var ranks: ChangeRanks
    var list: ChatList?
    var unread: Int64
}

/// Where one change moved its chat in each view whose order it changed: the chat's row index
/// before the change and after it (nil when it was or is not a row), as the index's insert and
/// removal found them. A view whose order the change left alone (the chat not in it, or in it
/// with the same key) has none: a diff ranks the chat itself there.
struct ChangeRanks {
    /// Per view slot (`ChatIndex.slot(of:)`): the ranks, or nil when not reported.
    private var slots: (Ranks?, Ranks?, Ranks?, Ranks?) = (nil, nil, nil, nil)

    struct Ranks {
        var old: Int?
        var new: Int?
    }

    mutating func set(slot: Int, old: Int?, new: Int?) {
        let ranks = Ranks(old: old, new: new)
        switch slot {
        case 0: slots.0 = ranks
        case 1: slots.1 = ranks
        case 2: slots.2 = ranks
        default: slots.3 = ranks
        }
    }

    /// The ranks in `view`, when the change reported them.
    func ranks(in view: ChatListView) -> Ranks? {
        switch ChatIndex.slot(of: view) {
        case 0: slots.0
        case 1: slots.1
        case 2: slots.2
        default: slots.3
        }
    }
}
