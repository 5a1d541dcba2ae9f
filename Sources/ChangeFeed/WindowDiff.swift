import ChatModel
import ListDiff

/// What a subscriber last saw of a chat (nil when it did not exist). Content is compared whole,
/// so that a chat removed and created again with the same id and revision still gets its new
/// content — unless the index kept the chat without its content (`ChatContentSource`): then its
/// other fields and revision are compared, as a chat's content never changes without a new
/// revision.
struct KnownChat {
    var chat: Chat?
    /// False when `chat` lacks its content.
    var hasContent = true

    init(chat: Chat? = nil, hasContent: Bool = true) {
        self.chat = chat
        self.hasContent = hasContent
    }

    /// The chat as the index kept it (nil when there was none), moved.
    init(_ stored: consuming ChatTable.StoredChat?) {
        if let stored {
            self.init(chat: stored.chat, hasContent: stored.hasContent)
        } else {
            self.init()
        }
    }

    /// True when the subscriber's row of the chat differs from `now`.
    func differs(from now: Chat?) -> Bool {
        // A new revision is a change whatever the content (the common case: no string compared).
        if chat?.revision != now?.revision { return true }
        guard !hasContent, let chat, let now else { return chat != now }
        return chat.id != now.id || chat.revision != now.revision || chat.lastMessageDate != now.lastMessageDate
            || chat.unread != now.unread || chat.list != now.list || chat.pinOrder != now.pinOrder || chat.muted != now.muted
    }

    /// `differs(from:)` for a chat that exists now, read where it is: a `Chat?` passed or bound
    /// is copied and destroyed through its value witnesses (a chat is too large to be copied
    /// inline), a few hundred instructions each time.
    func differs(from now: UnsafePointer<Chat>) -> Bool {
        // No chat before has no revision: a change (and `chat` is not nil below).
        if chat?.revision != now.pointee.revision { return true }
        guard !hasContent else { return chat! != now.pointee }
        return chat?.id != now.pointee.id || chat?.lastMessageDate != now.pointee.lastMessageDate
            || chat?.unread != now.pointee.unread || chat?.list != now.pointee.list
            || chat?.pinOrder != now.pointee.pinOrder || chat?.muted != now.pointee.muted
    }

    /// The chat's key when it is a row of `view`.
    func key(in view: ChatListView) -> ChatOrderKey? {
        guard let chat, view.contains(chat) else { return nil }
        return chat.orderKey
    }
}

/// The batches that bring a subscriber from the list it knows to the current list, computed
/// from the chats that changed, without materializing either list.
///
/// The subscriber's list is the first `limit` rows (all when nil) of its view as it was, which
/// is the current index with every chat of `known` put back where it was. A chat entering or
/// leaving the view (another list, read, unread) is an insert or a delete. Only chats whose order
/// key changed may move, as few as possible and upward-preferred among them (docs/PROTOCOL.md, Applying a batch); chats
/// entering or leaving a window are inserts and deletes.
///
/// - Complexity: O(d log n) for d changed chats in a list of n.
struct WindowDiff {
    var structural: Batch<Chat>?
    var updates: Batch<Chat>?
    /// Rows in the subscriber's list after the batches.
    var newCount: Int

    private struct Row {
        var id: String
        /// The chat now, for a row of the current list (inserts and updates carry it).
        var chat: Chat?
        var oldIndex: Int?
        var newIndex: Int?
        var keyChanged = false
        var revisionChanged = false
    }

    init(index: ChatIndex, view: ChatListView, known: [String: KnownChat], limit: Int?) {
        switch known.count {
        case 0:
            self.init(unchangedRowsOf: index, view: view, limit: limit)
        case 1:
            let (id, was) = known.first!
            self.init(index: index, view: view, changedID: id, was: was, limit: limit)
        default:
            self.init(index: index, view: view, changed: known, limit: limit)
        }
    }

    /// No row changed: no batch, only the count.
    private init(unchangedRowsOf index: ChatIndex, view: ChatListView, limit: Int?) {
        newCount = min(limit ?? Int.max, index.count(of: view))
    }

    /// One changed chat (the common case of a subscriber that keeps up): the same batches as the
    /// general case gives, from two ranks and at most one row crossing the window's edge,
    /// without sorting or matching.
    ///
    /// - Complexity: O(log n).
    init(index: ChatIndex, view: ChatListView, changedID id: String, was: KnownChat, limit: Int?) {
        let now = index.chat(id: id)
        let wasKey = was.key(in: view)
        let nowKey = now.flatMap { view.contains($0) ? $0.orderKey : nil }
        // The old list is the current one with the chat put back where it was.
        let oldRank = wasKey.map { key in
            var rank = index.rank(of: key, in: view)
            if let nowKey, nowKey < key { rank -= 1 }
            if let wasKey, wasKey < key { rank += 1 }
            return rank
        }
        let newRank = nowKey.map { index.rank(of: $0, in: view) }
        self = withUnsafePointer(to: now) { now in
            WindowDiff(
                view: view, was: was, now: now.chat, oldRank: oldRank, newRank: newRank,
                rowCount: index.count(of: view), limit: limit, row: { index.chat(id: index.key(at: $0, in: view).id)! })
        }
    }

    /// One changed chat, the only change since the subscriber's list, whose row indices in
    /// `view` before and after it are known (the index reports them as it applies a change:
    /// `ChangeRanks`), in a view of `rowCount` rows now: no rank and no lookup to make. `now` is
    /// the chat after the change (nil when it was removed); `row` gives the view's row at an
    /// index, asked only for the row that comes into a window when the chat leaves it.
    ///
    /// `was` is borrowed (an initializer's arguments are otherwise passed owned: the caller's
    /// chat was copied to be passed here), and `now` is read where it is, and copied once, into
    /// the batch that carries it (see `KnownChat.differs(from:)`). It is read only when the chat
    /// is a row of the view now (`newRank`), so never nil then.
    ///
    /// - Complexity: O(1), plus `row`'s when a row crosses the window's edge.
    init(
        view: ChatListView, was: borrowing KnownChat, now: UnsafePointer<Chat>?, oldRank: Int?, newRank: Int?,
        rowCount: Int, limit: Int?, row: (Int) -> Chat
    ) {
        let window = limit ?? Int.max
        newCount = min(window, rowCount)
        let oldIndex = oldRank.flatMap { $0 < window ? $0 : nil }
        let newIndex = newRank.flatMap { $0 < window ? $0 : nil }
        var deletes: [Int] = []
        var inserts: [IndexedItem<Chat>] = []
        var moves: [Move] = []
        switch (oldIndex, newIndex) {
        case (let old?, let new?):
            if old != new { moves = [Move(from: old, to: new)] }
            // A row now, so the chat is there (`newRank`).
            if was.differs(from: now!) { updates = Batch(updates: [IndexedItem(index: new, item: now!.pointee)]) }
        case (let old?, nil):
            deletes = [old]
            // The row after the window's last comes in (the chat was in it, and is no longer).
            if let limit, limit <= rowCount {
                inserts = [IndexedItem(index: limit - 1, item: row(limit - 1))]
            }
        case (nil, let new?):
            inserts = [IndexedItem(index: new, item: now!.pointee)]
            // The window's last row goes out (the chat came in from below it or from nowhere).
            if let limit, limit <= rowCount - 1 + (oldRank == nil ? 0 : 1) {
                deletes = [limit - 1]
            }
        case (nil, nil):
            break
        }
        if !deletes.isEmpty || !inserts.isEmpty || !moves.isEmpty {
            structural = Batch(deletes: deletes, inserts: inserts, moves: moves)
        }
    }

    /// Any number of changed chats.
    ///
    /// - Complexity: O(d log n) for d changed chats.
    private init(index: ChatIndex, view: ChatListView, changed known: [String: KnownChat], limit: Int?) {
        // Phase 1: the old list's ranks, from the index corrected by the changed chats.
        // Every changed chat as it is now, looked up once.
        var changed: [(id: String, was: KnownChat, now: Chat?, nowKey: ChatOrderKey?)] = []
        changed.reserveCapacity(known.count)
        for (id, was) in known {
            let now = index.chat(id: id)
            changed.append((id, was, now, now.flatMap { view.contains($0) ? $0.orderKey : nil }))
        }
        var oldKeys = known.values.compactMap { $0.key(in: view) }
        oldKeys.sort()
        var newKeys = changed.compactMap(\.nowKey)
        newKeys.sort()
        let window = limit ?? Int.max
        let rowCount = index.count(of: view)
        newCount = min(window, rowCount)
        func oldRank(_ key: ChatOrderKey) -> Int {
            index.rank(of: key, in: view) - newKeys.lowerBound(of: key) + oldKeys.lowerBound(of: key)
        }

        // Phase 2: the rows that differ — changed chats, and unchanged chats that cross the
        // window's edge (they are within `known.count` rows of it).
        var rows: [Row] = []
        rows.reserveCapacity(known.count)
        for (id, was, now, nowKey) in changed {
            let wasKey = was.key(in: view)
            var row = Row(id: id, chat: nowKey == nil ? nil : now)
            if let wasKey {
                let rank = oldRank(wasKey)
                if rank < window { row.oldIndex = rank }
            }
            if let nowKey {
                let rank = index.rank(of: nowKey, in: view)
                if rank < window { row.newIndex = rank }
            }
            guard row.oldIndex != nil || row.newIndex != nil else { continue }
            row.keyChanged = wasKey != nil && nowKey != nil && wasKey != nowKey
            row.revisionChanged = was.differs(from: now)
            rows.append(row)
        }
        if let limit {
            let start = max(0, limit - known.count)
            // min(rowCount, limit + known.count), without overflowing for a limit near Int.max.
            let end = limit > rowCount - known.count ? rowCount : limit + known.count
            let scanned = index.keys(from: start, count: end - start, in: view)
            for (offset, key) in scanned.enumerated() where known[key.id] == nil {
                let newRank = start + offset
                let rank = oldRank(key)
                if (rank < limit) != (newRank < limit) {
                    rows.append(Row(id: key.id, oldIndex: rank < limit ? rank : nil, newIndex: newRank < limit ? newRank : nil))
                }
            }
        }

        // Phase 3: deletes, inserts, and the rows that may move.
        var deletes: [Int] = []
        var inserts: [IndexedItem<Chat>] = []
        var movable: [Row] = []
        for row in rows {
            switch (row.oldIndex, row.newIndex) {
            case (let old?, nil): deletes.append(old)
            case (nil, let new?): inserts.append(IndexedItem(index: new, item: row.chat ?? index.chat(id: row.id)!))
            case (_?, _?) where row.keyChanged: movable.append(row)
            default: break
            }
        }
        deletes.sort(by: >)
        inserts.sort { $0.index < $1.index }

        // Phase 4: a movable row can stay only where as many fixed rows precede it in both lists;
        // among those, a longest increasing subsequence with the most chats that did not go up stays.
        let deletedOld = deletes.reversed() as [Int]
        let insertedNew = inserts.map(\.index)
        var movableOld = movable.map { $0.oldIndex! }
        movableOld.sort()
        var movableNew = movable.map { $0.newIndex! }
        movableNew.sort()
        movable.sort { $0.oldIndex! < $1.oldIndex! }
        var candidates: [Int] = []
        var wentUp: [Bool] = []
        for (position, row) in movable.enumerated() {
            let old = row.oldIndex!
            let new = row.newIndex!
            let commonBeforeOld = old - deletedOld.lowerBound(of: old)
            let commonBeforeNew = new - insertedNew.lowerBound(of: new)
            if commonBeforeOld - movableOld.lowerBound(of: old) == commonBeforeNew - movableNew.lowerBound(of: new) {
                candidates.append(position)
                wentUp.append(commonBeforeNew < commonBeforeOld)
            }
        }
        var stays = [Bool](repeating: false, count: movable.count)
        let chosen = FewestMoves.select(
            newPositions: candidates.map { movable[$0].newIndex! }, wentUp: wentUp)
        for (candidate, stay) in zip(candidates, chosen) where stay { stays[candidate] = true }
        var moves: [Move] = []
        for (position, row) in movable.enumerated() where !stays[position] {
            moves.append(Move(from: row.oldIndex!, to: row.newIndex!))
        }

        // Phase 5: rows present before and after whose content changed, at their new index.
        var updates: [IndexedItem<Chat>] = []
        for row in rows where row.oldIndex != nil && row.revisionChanged {
            if let new = row.newIndex { updates.append(IndexedItem(index: new, item: row.chat ?? index.chat(id: row.id)!)) }
        }
        updates.sort { $0.index < $1.index }
        structural = deletes.isEmpty && inserts.isEmpty && moves.isEmpty
            ? nil : Batch(deletes: deletes, inserts: inserts, moves: moves)
        self.updates = updates.isEmpty ? nil : Batch(updates: updates)
    }
}

extension Array where Element: Comparable {
    /// The number of elements less than `value` in a sorted array. O(log n).
    func lowerBound(of value: Element) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
