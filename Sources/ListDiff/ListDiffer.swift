/// The diff of two lists into UIKit-safe batches (SPEC §3).
public enum ListDiffer {
    /// The blind diff of `old` into `new`: deletes, inserts, the fewest moves (upward-preferred
    /// where there is a choice), and the updates of rows that stay deferred to a second,
    /// pure-update batch.
    ///
    /// Items are matched by `id`; a row is updated when its `revision` differs. The rows that stay
    /// (are not moved) are a longest increasing subsequence of the common items, and among those
    /// one that keeps the most items that did not go up (SPEC §3; see `FewestMoves`).
    ///
    /// - Throws: `ListDiffError.duplicateID` when an id appears twice in one list.
    /// - Complexity: O((n + m) log(n + m)) for lists of n and m items. Every id of `old` is hashed
    ///   (to find duplicates); the ids of `new` only where they differ from `old`: rows at the same
    ///   place at both ends are compared, and a small edit (at most `smallEditLimit` deletes and
    ///   inserts of ids in between) is aligned by comparing ids in order, O((n + m) d) for d edits.
    @inlinable
    public static func diff<Item: DiffableItem>(
        from old: [Item], to new: [Item]
    ) throws(ListDiffError) -> ListDiffResult<Item> {
        try computeDiff(from: old, to: new, orderKeyChanged: nil)
    }

    /// The diff of `old` into `new` when the caller knows whose order key changed: only those
    /// items may move (the fewest, upward-preferred, among them); every other common item stays.
    ///
    /// - Parameter orderKeyChanged: ids of the items whose order key differs between the lists.
    ///   Ids that are not in both lists are ignored.
    /// - Throws: `ListDiffError.duplicateID`, or `.unchangedKeysReordered` when two items outside
    ///   `orderKeyChanged` changed their relative order.
    /// - Complexity: O((n + m) log(n + m)).
    @inlinable
    public static func diff<Item: DiffableItem>(
        from old: [Item], to new: [Item], orderKeyChanged: Set<Item.ID>
    ) throws(ListDiffError) -> ListDiffResult<Item> {
        try computeDiff(from: old, to: new, orderKeyChanged: orderKeyChanged)
    }

    /// The most edits (deletes plus inserts of ids) the small-edit path aligns before it falls back
    /// to matching every id by hash.
    @usableFromInline
    static var smallEditLimit: Int { 32 }

    @inlinable
    static func computeDiff<Item: DiffableItem>(
        from old: [Item], to new: [Item], orderKeyChanged: Set<Item.ID>?
    ) throws(ListDiffError) -> ListDiffResult<Item> {
        precondition(old.count < 0x7FFF_FFFF && new.count < 0x7FFF_FFFF, "a list of a diff holds fewer than 2^31 rows")
        // Phase 1: the rows that sit at the same place at both ends stay; only the middle,
        // old[prefix..<oldEnd] and new[prefix..<newEnd], is matched.
        let bothCount = Swift.min(old.count, new.count)
        var prefix = 0
        while prefix < bothCount, old[prefix].id == new[prefix].id { prefix += 1 }
        var suffix = 0
        while suffix < bothCount - prefix, old[old.count - 1 - suffix].id == new[new.count - 1 - suffix].id {
            suffix += 1
        }
        let oldEnd = old.count - suffix
        let newEnd = new.count - suffix
        let oldMiddle = oldEnd - prefix
        let newMiddle = newEnd - prefix

        // Phase 2: a small edit of the middle is aligned by comparing ids in order.
        let snakes = orderKeyChanged == nil
            ? alignedRuns(old, prefix..<oldEnd, new, prefix..<newEnd, maxEdits: smallEditLimit) : nil

        // Phase 3: every old id into a table, which finds duplicates in `old`.
        var table = IDTable<Item>(capacity: old.count + (snakes == nil ? newMiddle : smallEditLimit))
        defer { table.deallocate() }
        for i in old.indices where table.findOrInsert(old[i].id, entry: i + 1, old: old, new: new) != 0 {
            throw .duplicateID(String(describing: old[i].id), in: .old)
        }
        if let snakes {
            return try smallEditDiff(
                from: old, to: new, prefix: prefix, oldEnd: oldEnd, newEnd: newEnd, snakes: snakes, table: &table)
        }

        // Phase 4: match the middle. `newIndexOfOld[i]` is the new index of old[prefix + i]
        // relative to `prefix`, or -1 (deleted); `oldIndexOfNew[j]` the converse (-1: inserted).
        var newIndexOfOld = [Int](repeating: -1, count: oldMiddle)
        var oldIndexOfNew = [Int](repeating: -1, count: newMiddle)
        for j in 0..<newMiddle {
            let id = new[prefix + j].id
            let entry = table.findOrInsert(id, entry: -(prefix + j) - 1, old: old, new: new)
            if entry == 0 { continue }
            let i = entry - 1 - prefix
            guard entry > 0, i >= 0, i < oldMiddle, newIndexOfOld[i] < 0 else {
                throw .duplicateID(String(describing: id), in: .new)
            }
            newIndexOfOld[i] = j
            oldIndexOfNew[j] = i
        }

        // Phase 5: each common middle item's rank among the common items, in old and in new order.
        // `commonNewRank[k]` belongs to the k-th common item in old order.
        var newRankOfNewIndex = [Int](repeating: -1, count: newMiddle)
        var commonCount = 0
        for j in 0..<newMiddle where oldIndexOfNew[j] >= 0 {
            newRankOfNewIndex[j] = commonCount
            commonCount += 1
        }
        var commonOldIndex = [Int]()
        commonOldIndex.reserveCapacity(commonCount)
        var commonNewRank = [Int]()
        commonNewRank.reserveCapacity(commonCount)
        for i in 0..<oldMiddle where newIndexOfOld[i] >= 0 {
            commonOldIndex.append(i)
            commonNewRank.append(newRankOfNewIndex[newIndexOfOld[i]])
        }

        // Phase 6: which common items may move, and the choice of those that stay.
        let stays: [Bool]
        if let orderKeyChanged {
            var mayMove = [Bool](repeating: false, count: commonCount)
            if !orderKeyChanged.isEmpty {
                for k in 0..<commonCount where orderKeyChanged.contains(old[prefix + commonOldIndex[k]].id) {
                    mayMove[k] = true
                }
            }
            do {
                stays = try FewestMoves.select(newRanks: commonNewRank, mayMove: mayMove)
            } catch {
                throw .unchangedKeysReordered(
                    String(describing: old[prefix + commonOldIndex[error.earlier]].id),
                    String(describing: old[prefix + commonOldIndex[error.later]].id))
            }
        } else {
            stays = FewestMoves.select(newRanks: commonNewRank)
        }

        // Phase 7: the batches, in the lists' own indices.
        var deletes = [Int]()
        for i in stride(from: oldMiddle - 1, through: 0, by: -1) where newIndexOfOld[i] < 0 {
            deletes.append(prefix + i)
        }
        var inserts = [IndexedItem<Item>]()
        for j in 0..<newMiddle where oldIndexOfNew[j] < 0 {
            inserts.append(IndexedItem(index: prefix + j, item: new[prefix + j]))
        }
        var moves = [Move]()
        for k in 0..<commonCount where !stays[k] {
            let i = commonOldIndex[k]
            moves.append(Move(from: prefix + i, to: prefix + newIndexOfOld[i]))
        }
        var updates = [IndexedItem<Item>]()
        for j in 0..<prefix where old[j].revision != new[j].revision {
            updates.append(IndexedItem(index: j, item: new[j]))
        }
        for j in 0..<newMiddle {
            let i = oldIndexOfNew[j]
            if i >= 0, old[prefix + i].revision != new[prefix + j].revision {
                updates.append(IndexedItem(index: prefix + j, item: new[prefix + j]))
            }
        }
        for t in 0..<suffix where old[oldEnd + t].revision != new[newEnd + t].revision {
            updates.append(IndexedItem(index: newEnd + t, item: new[newEnd + t]))
        }
        return result(deletes: deletes, inserts: inserts, moves: moves, updates: updates)
    }

    @inlinable
    static func result<Item>(
        deletes: [Int], inserts: [IndexedItem<Item>], moves: [Move], updates: [IndexedItem<Item>]
    ) -> ListDiffResult<Item> {
        let structural = deletes.isEmpty && inserts.isEmpty && moves.isEmpty
            ? nil : Batch(deletes: deletes, inserts: inserts, moves: moves)
        return ListDiffResult(structural: structural, updates: updates.isEmpty ? nil : Batch(updates: updates))
    }

    /// The diff of a middle that `snakes` aligned with at most `smallEditLimit` edits: only the
    /// unaligned rows (at most that many) are looked up in `table` (which holds every old id), and
    /// only they and the aligned rows they could displace are decided again; the other rows are
    /// compared for updates and nothing else. Indices in `snakes` are relative to `prefix`.
    ///
    /// - Complexity: O(n + m + d³) for lists of n and m rows and d edits, allocating O(d) beside the batches.
    @inlinable
    static func smallEditDiff<Item: DiffableItem>(
        from old: [Item], to new: [Item], prefix: Int, oldEnd: Int, newEnd: Int, snakes: [Snake],
        table: inout IDTable<Item>
    ) throws(ListDiffError) -> ListDiffResult<Item> {
        let oldMiddle = oldEnd - prefix
        let newMiddle = newEnd - prefix
        // The unaligned rows of each side, ascending, relative to `prefix`.
        var unalignedOld: [Int] = []
        var unalignedNew: [Int] = []
        var x = 0
        var y = 0
        for snake in snakes {
            while x < snake.oldStart { unalignedOld.append(x); x += 1 }
            while y < snake.newStart { unalignedNew.append(y); y += 1 }
            x = snake.oldStart + snake.length
            y = snake.newStart + snake.length
        }
        while x < oldMiddle { unalignedOld.append(x); x += 1 }
        while y < newMiddle { unalignedNew.append(y); y += 1 }

        // An unaligned new row is inserted, or matches an unaligned old row (which moves or stays
        // out of the alignment's order); any other match is a duplicate in `new`.
        var newOfUnalignedOld = [Int](repeating: -1, count: unalignedOld.count)
        var matchedNew = [Bool](repeating: false, count: unalignedNew.count)
        var matched = 0
        for (q, j) in unalignedNew.enumerated() {
            let id = new[prefix + j].id
            let entry = table.findOrInsert(id, entry: -(prefix + j) - 1, old: old, new: new)
            if entry == 0 { continue }
            let p = entry > 0 ? position(of: entry - 1 - prefix, in: unalignedOld) : nil
            guard let p, newOfUnalignedOld[p] < 0 else { throw .duplicateID(String(describing: id), in: .new) }
            newOfUnalignedOld[p] = j
            matchedNew[q] = true
            matched += 1
        }
        var deleted: [Int] = []
        for (p, i) in unalignedOld.enumerated() where newOfUnalignedOld[p] < 0 { deleted.append(i) }
        var inserted: [Int] = []
        for (q, j) in unalignedNew.enumerated() where !matchedNew[q] { inserted.append(j) }

        // The aligned rows are an increasing chain of the common rows; the matched unaligned rows
        // are the f rows outside it. As in `FewestMoves.select(newRanks:improving:)`, a row outside
        // that is out of order with more than f chain rows never stays; the others and the chain
        // rows they are out of order with are decided again.
        var candidates: [Int] = []
        for (p, i) in unalignedOld.enumerated() where newOfUnalignedOld[p] >= 0 {
            let chainBeforeOld = i - countBelow(i, in: unalignedOld)
            let j = newOfUnalignedOld[p]
            let chainBeforeNew = j - countBelow(j, in: unalignedNew)
            let displaced = Swift.min(chainBeforeOld, chainBeforeNew)..<Swift.max(chainBeforeOld, chainBeforeNew)
            if displaced.count > matched { continue }
            candidates.append(i)
            for chainPosition in displaced {
                var k = chainPosition
                for u in unalignedOld {
                    if u > k { break }
                    k += 1
                }
                candidates.append(k)
            }
        }
        candidates.sort()
        var newPositions: [Int] = []
        var wentUp: [Bool] = []
        var distinct: [Int] = []
        for i in candidates where distinct.last != i {
            distinct.append(i)
            let j: Int
            if let p = position(of: i, in: unalignedOld) {
                j = newOfUnalignedOld[p]
            } else {
                var s = snakes.count - 1
                while snakes[s].oldStart > i { s -= 1 }
                j = i - snakes[s].oldStart + snakes[s].newStart
            }
            newPositions.append(j)
            wentUp.append(j - countBelow(j, in: inserted) < i - countBelow(i, in: deleted))
        }
        let stays = FewestMoves.select(newPositions: newPositions, wentUp: wentUp)

        var moves: [Move] = []
        for (p, i) in unalignedOld.enumerated() where newOfUnalignedOld[p] >= 0 {
            if let c = position(of: i, in: distinct), stays[c] { continue }
            moves.append(Move(from: prefix + i, to: prefix + newOfUnalignedOld[p]))
        }
        for (c, i) in distinct.enumerated() where !stays[c] && position(of: i, in: unalignedOld) == nil {
            moves.append(Move(from: prefix + i, to: prefix + newPositions[c]))
        }
        moves.sort { $0.from < $1.from }

        var updates = [IndexedItem<Item>]()
        for j in 0..<prefix where old[j].revision != new[j].revision {
            updates.append(IndexedItem(index: j, item: new[j]))
        }
        var oldOfNew: [Int: Int] = [:]
        for (p, j) in newOfUnalignedOld.enumerated() where j >= 0 { oldOfNew[j] = unalignedOld[p] }
        var q = 0
        func unalignedUpdates(before end: Int) {
            while q < unalignedNew.count, unalignedNew[q] < end {
                let j = unalignedNew[q]
                if let i = oldOfNew[j], old[prefix + i].revision != new[prefix + j].revision {
                    updates.append(IndexedItem(index: prefix + j, item: new[prefix + j]))
                }
                q += 1
            }
        }
        for snake in snakes {
            unalignedUpdates(before: snake.newStart)
            let oldStart = prefix + snake.oldStart
            let newStart = prefix + snake.newStart
            for t in 0..<snake.length where old[oldStart + t].revision != new[newStart + t].revision {
                updates.append(IndexedItem(index: newStart + t, item: new[newStart + t]))
            }
        }
        unalignedUpdates(before: newMiddle)
        for j in newEnd..<new.count where old[j - newEnd + oldEnd].revision != new[j].revision {
            updates.append(IndexedItem(index: j, item: new[j]))
        }
        return result(
            deletes: deleted.reversed().map { prefix + $0 },
            inserts: inserted.map { IndexedItem(index: prefix + $0, item: new[prefix + $0]) },
            moves: moves, updates: updates)
    }

    /// How many values of the ascending `values` are below `value`.
    @inlinable
    static func countBelow(_ value: Int, in values: [Int]) -> Int {
        var low = 0
        var high = values.count
        while low < high {
            let mid = (low + high) / 2
            if values[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The position of `value` in the ascending `values`, if it is there.
    @inlinable
    static func position(of value: Int, in values: [Int]) -> Int? {
        let low = countBelow(value, in: values)
        return low < values.count && values[low] == value ? low : nil
    }

    /// A run of rows that are equal in both lists: `old[oldStart + t]` and `new[newStart + t]` for
    /// `t` in `0..<length`, offsets relative to the ranges aligned.
    @usableFromInline
    struct Snake {
        @usableFromInline var oldStart: Int
        @usableFromInline var newStart: Int
        @usableFromInline var length: Int

        @inlinable
        init(oldStart: Int, newStart: Int, length: Int) {
            self.oldStart = oldStart
            self.newStart = newStart
            self.length = length
        }
    }

    /// A longest common subsequence of the ids of two ranges by Myers' greedy O((N + M) D)
    /// algorithm, as runs in ascending order; nil when it needs more than `maxEdits` deletes and inserts.
    @inlinable
    static func alignedRuns<Item: DiffableItem>(
        _ old: [Item], _ oldRange: Range<Int>, _ new: [Item], _ newRange: Range<Int>, maxEdits: Int
    ) -> [Snake]? {
        let n = oldRange.count
        let m = newRange.count
        let limit = Swift.min(maxEdits, n + m)
        let offset = limit + 1
        var frontier = [Int](repeating: 0, count: 2 * limit + 3)
        // trace[d * d + d + k]: the furthest x on diagonal k after d edits, for k in -d...d.
        var trace = [Int]()
        var edits = -1
        old.withUnsafeBufferPointer { oldItems in
            new.withUnsafeBufferPointer { newItems in
                let a = oldItems.baseAddress! + oldRange.lowerBound
                let b = newItems.baseAddress! + newRange.lowerBound
                search: for d in 0...limit {
                    for k in stride(from: -d, through: d, by: 2) {
                        var x = k == -d || (k != d && frontier[offset + k - 1] < frontier[offset + k + 1])
                            ? frontier[offset + k + 1] : frontier[offset + k - 1] + 1
                        var y = x - k
                        while x < n, y < m, a[x].id == b[y].id {
                            x += 1
                            y += 1
                        }
                        frontier[offset + k] = x
                        if x >= n, y >= m {
                            trace.append(contentsOf: frontier[(offset - d)...(offset + d)])
                            edits = d
                            break search
                        }
                    }
                    trace.append(contentsOf: frontier[(offset - d)...(offset + d)])
                }
            }
        }
        if edits < 0 { return nil }
        var snakes: [Snake] = []
        var x = n
        var y = m
        for d in stride(from: edits, to: 0, by: -1) {
            let k = x - y
            let previous = (d - 1) * (d - 1) + (d - 1)
            let down = k == -d || (k != d && trace[previous + k - 1] < trace[previous + k + 1])
            let previousK = down ? k + 1 : k - 1
            let previousX = trace[previous + previousK]
            let startX = down ? previousX : previousX + 1
            if x > startX { snakes.append(Snake(oldStart: startX, newStart: startX - k, length: x - startX)) }
            x = previousX
            y = previousX - previousK
        }
        if x > 0 { snakes.append(Snake(oldStart: 0, newStart: 0, length: x)) }
        return snakes.reversed()
    }
}

/// An open-addressing table from ids to their index in `old` (entry `i + 1`) or, for ids only in
/// `new`, in `new` (entry `-(j + 1)`); it stores indices, never copies of ids. Each slot is one
/// word: 32 bits of the id's hash above the entry's 32-bit code (0: empty), so that a probe reads
/// one cache line and compares ids only when the hash bits agree. Lists hold fewer than 2³¹ rows.
/// The owner calls `deallocate()`.
@usableFromInline
struct IDTable<Item: DiffableItem> {
    @usableFromInline var slots: UnsafeMutablePointer<UInt64>
    @usableFromInline var mask: Int
    @usableFromInline var count = 0

    @inlinable
    init(capacity: Int) {
        precondition(capacity < 0x7FFF_FFFF, "a list of a diff holds fewer than 2^31 rows")
        var size = 16
        while size < 2 * capacity + 16 { size <<= 1 }
        mask = size - 1
        slots = .allocate(capacity: size)
        slots.initialize(repeating: 0, count: size)
    }

    @inlinable
    func deallocate() { slots.deallocate() }

    /// The entry of `id` when it is in the table; otherwise inserts `entry` for it and returns 0.
    @inlinable
    mutating func findOrInsert(_ id: Item.ID, entry: Int, old: [Item], new: [Item]) -> Int {
        let hash = UInt64(UInt(bitPattern: id.hashValue))
        let tag = hash & 0xFFFF_FFFF_0000_0000
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let word = slots[slot]
            if word == 0 { break }
            if word & 0xFFFF_FFFF_0000_0000 == tag {
                let code = Int(truncatingIfNeeded: word & 0xFFFF_FFFF)
                if code & 0x8000_0000 == 0 {
                    if old[code - 1].id == id { return code }
                } else if new[(code & 0x7FFF_FFFF) - 1].id == id {
                    return -(code & 0x7FFF_FFFF)
                }
            }
            slot = (slot + 1) & mask
        }
        let code = entry > 0 ? UInt64(entry) : 0x8000_0000 | UInt64(-entry)
        slots[slot] = tag | code
        count += 1
        if 4 * count > 3 * (mask + 1) { grow(old: old, new: new) }
        return 0
    }

    @inlinable
    mutating func grow(old: [Item], new: [Item]) {
        let oldSlots = slots
        let oldSize = mask + 1
        mask = 2 * oldSize - 1
        slots = .allocate(capacity: mask + 1)
        slots.initialize(repeating: 0, count: mask + 1)
        for index in 0..<oldSize where oldSlots[index] != 0 {
            let word = oldSlots[index]
            let code = Int(truncatingIfNeeded: word & 0xFFFF_FFFF)
            let id = code & 0x8000_0000 == 0 ? old[code - 1].id : new[(code & 0x7FFF_FFFF) - 1].id
            var target = Int(truncatingIfNeeded: UInt(bitPattern: id.hashValue)) & mask
            while slots[target] != 0 { target = (target + 1) & mask }
            slots[target] = word
        }
        oldSlots.deallocate()
    }
}
