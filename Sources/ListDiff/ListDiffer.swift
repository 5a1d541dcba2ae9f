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
        // Phase 1: every old id into a table, which finds duplicates in `old`.
        var table = IDTable(old: old, new: new)
        for i in old.indices where table.findOrInsert(old[i].id, entry: i + 1) != 0 {
            throw .duplicateID(String(describing: old[i].id), in: .old)
        }

        // Phase 2: the rows that sit at the same place at both ends stay; only the middle,
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

        // Phase 3: match the middle. `newIndexOfOld[i]` is the new index of old[prefix + i]
        // relative to `prefix`, or -1 (deleted); `oldIndexOfNew[j]` the converse (-1: inserted).
        // A small edit is aligned by comparing ids in order (no hashing of what is unchanged);
        // `aligned[i]` marks old rows the alignment kept in place.
        var newIndexOfOld = [Int](repeating: -1, count: oldMiddle)
        var oldIndexOfNew = [Int](repeating: -1, count: newMiddle)
        let snakes = orderKeyChanged == nil
            ? alignedRuns(old, prefix..<oldEnd, new, prefix..<newEnd, maxEdits: smallEditLimit) : nil
        var aligned: [Bool] = []
        if let snakes {
            aligned = [Bool](repeating: false, count: oldMiddle)
            for snake in snakes {
                for t in 0..<snake.length {
                    newIndexOfOld[snake.oldStart + t] = snake.newStart + t
                    oldIndexOfNew[snake.newStart + t] = snake.oldStart + t
                    aligned[snake.oldStart + t] = true
                }
            }
        }
        for j in 0..<newMiddle where oldIndexOfNew[j] < 0 {
            let id = new[prefix + j].id
            let entry = table.findOrInsert(id, entry: -(prefix + j) - 1)
            if entry == 0 { continue }
            let i = entry - 1 - prefix
            guard entry > 0, i >= 0, i < oldMiddle, newIndexOfOld[i] < 0 else {
                throw .duplicateID(String(describing: id), in: .new)
            }
            newIndexOfOld[i] = j
            oldIndexOfNew[j] = i
        }

        // Phase 4: each common middle item's rank among the common items, in old and in new order.
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

        // Phase 5: which common items may move, and the choice of those that stay.
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
        } else if snakes != nil {
            var inChain = [Bool](repeating: false, count: commonCount)
            for k in 0..<commonCount { inChain[k] = aligned[commonOldIndex[k]] }
            stays = FewestMoves.select(newRanks: commonNewRank, improving: inChain)
        } else {
            stays = FewestMoves.select(newRanks: commonNewRank)
        }

        // Phase 6: the batches, in the lists' own indices.
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
        let structural = deletes.isEmpty && inserts.isEmpty && moves.isEmpty
            ? nil : Batch(deletes: deletes, inserts: inserts, moves: moves)
        return ListDiffResult(structural: structural, updates: updates.isEmpty ? nil : Batch(updates: updates))
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
    /// algorithm, as runs; nil when it needs more than `maxEdits` deletes and inserts.
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
        return snakes
    }
}

/// An open-addressing table from ids to their index in `old` (entry `i + 1`) or, for ids only in
/// `new`, in `new` (entry `-(j + 1)`); it stores indices, never copies of ids.
@usableFromInline
struct IDTable<Item: DiffableItem> {
    @usableFromInline let old: [Item]
    @usableFromInline let new: [Item]
    @usableFromInline var hashes: [Int]
    @usableFromInline var entries: [Int]
    @usableFromInline var count = 0
    @usableFromInline var mask: Int

    @inlinable
    init(old: [Item], new: [Item]) {
        self.old = old
        self.new = new
        var size = 16
        while size < 2 * old.count + 16 { size <<= 1 }
        mask = size - 1
        hashes = [Int](repeating: 0, count: size)
        entries = [Int](repeating: 0, count: size)
    }

    /// The entry of `id` when it is in the table; otherwise inserts `entry` for it and returns 0.
    @inlinable
    mutating func findOrInsert(_ id: Item.ID, entry: Int) -> Int {
        let hash = id.hashValue
        var slot = hash & mask
        while true {
            let found = entries[slot]
            if found == 0 { break }
            if hashes[slot] == hash, (found > 0 ? old[found - 1].id : new[-found - 1].id) == id { return found }
            slot = (slot + 1) & mask
        }
        entries[slot] = entry
        hashes[slot] = hash
        count += 1
        if 4 * count > 3 * (mask + 1) { grow() }
        return 0
    }

    @inlinable
    mutating func grow() {
        let oldHashes = hashes
        let oldEntries = entries
        mask = 2 * (mask + 1) - 1
        hashes = [Int](repeating: 0, count: mask + 1)
        entries = [Int](repeating: 0, count: mask + 1)
        for slot in oldEntries.indices where oldEntries[slot] != 0 {
            var target = oldHashes[slot] & mask
            while entries[target] != 0 { target = (target + 1) & mask }
            entries[target] = oldEntries[slot]
            hashes[target] = oldHashes[slot]
        }
    }
}
