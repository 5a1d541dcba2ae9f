/// The diff of two lists into UIKit-safe batches (docs/PROTOCOL.md, Applying a batch).
public enum ListDiffer {
    /// The blind diff of `old` into `new`: deletes, inserts, the fewest moves (upward-preferred
    /// where there is a choice), and the updates of rows that stay deferred to a second,
    /// pure-update batch.
    ///
    /// Items are matched by `id`; a row is updated when its `revision` differs. The rows that stay
    /// (are not moved) are a longest increasing subsequence of the common items, and among those
    /// one that keeps the most items that did not go up (docs/PROTOCOL.md, Applying a batch; see `FewestMoves`).
    ///
    /// - Throws: `ListDiffError.duplicateID` when an id appears twice in one list.
    /// - Complexity: O((n + m) log(n + m)) for lists of n and m items. Every id of `old` is hashed
    ///   (to find duplicates); the ids of `new` only where they differ from `old`: rows at the same
    ///   place at both ends are compared, and a small edit (at most `smallEditLimit` deletes and
    ///   inserts of ids in between) is aligned by comparing ids in order, O((n + m) d) for d edits,
    ///   after which only the unaligned rows are looked up and decided (O(d³) beside the linear
    ///   passes, no allocation of the lists' size but the table of ids).
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

        // Phase 3: every old id into a table, which finds duplicates in `old`; the new middle's
        // ids are hashed too unless the middle is aligned.
        // When the table has one part, the new middle is matched in order instead (`matchInOrder`),
        // which skips hashing the rows that continue a run.
        let inOrder = snakes == nil && old.count + newMiddle <= IDTable<Item>.inOrderRows
        let table = IDTable<Item>(
            old: old, new: new, newRange: snakes == nil && !inOrder ? prefix..<newEnd : newEnd..<newEnd,
            reserving: inOrder ? newMiddle : nil)
        defer { table.deallocate() }
        if let snakes {
            try table.buildOld(old: old, new: new)
            return try smallEditDiff(
                from: old, to: new, prefix: prefix, oldEnd: oldEnd, newEnd: newEnd, snakes: snakes, table: table)
        }

        // Phase 4: match the middle. `newIndexOfOld[i]` is the new index of old[prefix + i]
        // relative to `prefix`, or -1 (deleted); `oldIndexOfNew[j]` the converse (-1: inserted).
        var newIndexOfOld = [Int](repeating: -1, count: oldMiddle)
        var oldIndexOfNew = [Int](repeating: -1, count: newMiddle)
        if inOrder {
            try table.matchInOrder(
                old: old, new: new, prefix: prefix, newIndexOfOld: &newIndexOfOld, oldIndexOfNew: &oldIndexOfNew)
        } else {
            try table.match(
                old: old, new: new, prefix: prefix, newIndexOfOld: &newIndexOfOld, oldIndexOfNew: &oldIndexOfNew)
        }

        // Phase 5: the inserts and updates, and each common middle item's rank among the common
        // items in new order, which replaces its old index in `oldIndexOfNew`; then the deletes
        // and the common items in old order: `commonNewRank[k]` belongs to the k-th.
        var updates = [IndexedItem<Item>]()
        for j in 0..<prefix where old[j].revision != new[j].revision {
            updates.append(IndexedItem(index: j, item: new[j]))
        }
        var inserts = [IndexedItem<Item>]()
        var commonCount = 0
        for j in 0..<newMiddle {
            let i = oldIndexOfNew[j]
            if i < 0 {
                inserts.append(IndexedItem(index: prefix + j, item: new[prefix + j]))
                continue
            }
            if old[prefix + i].revision != new[prefix + j].revision {
                updates.append(IndexedItem(index: prefix + j, item: new[prefix + j]))
            }
            oldIndexOfNew[j] = commonCount
            commonCount += 1
        }
        for t in 0..<suffix where old[oldEnd + t].revision != new[newEnd + t].revision {
            updates.append(IndexedItem(index: newEnd + t, item: new[newEnd + t]))
        }
        var deletes = [Int]()
        deletes.reserveCapacity(oldMiddle - commonCount)
        var commonOldIndex = [Int]()
        commonOldIndex.reserveCapacity(commonCount)
        var commonNewRank = [Int]()
        commonNewRank.reserveCapacity(commonCount)
        for i in 0..<oldMiddle {
            let j = newIndexOfOld[i]
            if j < 0 {
                deletes.append(prefix + i)
            } else {
                commonOldIndex.append(i)
                commonNewRank.append(oldIndexOfNew[j])
            }
        }
        deletes.reverse()

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

        // Phase 7: the moves, in the lists' own indices.
        var moves = [Move]()
        for k in 0..<commonCount where !stays[k] {
            let i = commonOldIndex[k]
            moves.append(Move(from: prefix + i, to: prefix + newIndexOfOld[i]))
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
        table: IDTable<Item>
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
        var insertedIDs: [Item.ID] = []
        for (q, j) in unalignedNew.enumerated() {
            let id = new[prefix + j].id
            let entry = table.find(id, old: old, new: new)
            if entry == 0 {
                if insertedIDs.contains(id) { throw .duplicateID(String(describing: id), in: .new) }
                insertedIDs.append(id)
                continue
            }
            let p = position(of: entry - 1 - prefix, in: unalignedOld)
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

/// The ids of `old` (every row) and of `new[newRange]` in an open-addressing table, built and
/// probed part by part so that each part's slots stay in cache: a row's part is given by the top
/// bits of its id's hash, and each part has its own power-of-two region of slots.
///
/// A slot is one word: the upper 32 bits of the id's hash above a 32-bit code (0: empty; `i + 1`
/// for `old[i]`; `0x8000_0000 | (j + 1)` for `new[j]`), so that a probe reads one cache line and
/// compares ids only when the hash bits agree. Entries are returned as `i + 1` for `old[i]` and
/// `-(j + 1)` for `new[j]`, 0 for none. Lists hold fewer than 2³¹ rows. The owner calls
/// `deallocate()`.
@usableFromInline
struct IDTable<Item: DiffableItem> {
    /// Each part's region of slots: part `p` owns `regionStart[p]..<regionStart[p + 1]`.
    @usableFromInline var slots: UnsafeMutablePointer<UInt64>
    @usableFromInline var regionStart: [Int]
    /// The rows' words grouped by part: the old rows' first (`oldStart[p]..<oldStart[p + 1]`),
    /// then the new rows' (`newStart[p]..<newStart[p + 1]`).
    @usableFromInline var words: UnsafeMutablePointer<UInt64>
    @usableFromInline var oldStart: [Int]
    @usableFromInline var newStart: [Int]
    @usableFromInline let partBits: Int

    /// The most rows (old plus reserved new) for which `matchInOrder` is used, with one part.
    @usableFromInline static var inOrderRows: Int { 32_768 }
    @usableFromInline static var highBits: UInt64 { 0xFFFF_FFFF_0000_0000 }
    @usableFromInline static var newFlag: UInt64 { 0x8000_0000 }

    /// Hashes every row of `old` and of `new[newRange]` and groups them by part; `buildOld` or
    /// `match` then builds the table. With `reserving`, the table has one part, with room for that
    /// many more new rows (`matchInOrder`).
    ///
    /// - Complexity: O(n + r) for n old rows and r new ones.
    @inlinable
    init(old: [Item], new: [Item], newRange: Range<Int>, reserving: Int? = nil) {
        let total = old.count + newRange.count
        var bits = 0
        while reserving == nil, bits < 12, total >> bits > 4096 { bits += 1 }
        partBits = bits
        let parts = 1 << bits
        let unsorted = UnsafeMutablePointer<UInt64>.allocate(capacity: Swift.max(total, 1))
        var oldCounts = [Int](repeating: 0, count: parts + 1)
        var newCounts = [Int](repeating: 0, count: parts + 1)
        for i in old.indices {
            let hash = UInt64(UInt(bitPattern: old[i].id.hashValue))
            unsorted[i] = hash & Self.highBits | UInt64(i + 1)
            oldCounts[Self.part(hash, bits: bits)] += 1
        }
        var t = old.count
        for j in newRange {
            let hash = UInt64(UInt(bitPattern: new[j].id.hashValue))
            unsorted[t] = hash & Self.highBits | Self.newFlag | UInt64(j + 1)
            newCounts[Self.part(hash, bits: bits)] += 1
            t += 1
        }
        regionStart = [Int](repeating: 0, count: parts + 1)
        for p in 0..<parts {
            var size = 4
            // At most half full with the rows counted, at most two thirds with all reserved rows.
            let counted = oldCounts[p] + newCounts[p]
            let reserved = reserving ?? 0
            while size < Swift.max(2 * counted + reserved, 3 * (counted + reserved) / 2) + 2 { size <<= 1 }
            regionStart[p + 1] = regionStart[p] + size
        }
        // The regions are zeroed part by part, just before their part is built (`buildOld`, `match`).
        slots = .allocate(capacity: regionStart[parts])
        // Counts into starts (counting sort by part).
        oldStart = [Int](repeating: 0, count: parts + 1)
        newStart = [Int](repeating: 0, count: parts + 1)
        for p in 0..<parts { oldStart[p + 1] = oldStart[p] + oldCounts[p] }
        newStart[0] = old.count
        for p in 0..<parts { newStart[p + 1] = newStart[p] + newCounts[p] }
        if parts == 1 {
            words = unsorted
        } else {
            words = .allocate(capacity: total)
            var next = oldStart
            for t in 0..<old.count {
                let p = Self.part(unsorted[t], bits: bits)
                words[next[p]] = unsorted[t]
                next[p] += 1
            }
            next = newStart
            for t in old.count..<total {
                let p = Self.part(unsorted[t], bits: bits)
                words[next[p]] = unsorted[t]
                next[p] += 1
            }
            unsorted.deallocate()
        }
    }

    /// Zeroes part `p`'s region and inserts the old rows of the part.
    ///
    /// - Throws: `.duplicateID(_, in: .old)` when an id is twice in `old`.
    @inlinable
    func buildOld(part p: Int, old: [Item], new: [Item]) throws(ListDiffError) {
        (slots + regionStart[p]).initialize(repeating: 0, count: regionStart[p + 1] - regionStart[p])
        for t in oldStart[p]..<oldStart[p + 1] where findOrInsert(words[t], part: p, old: old, new: new) != 0 {
            let i = Int(truncatingIfNeeded: words[t] & 0x7FFF_FFFF) - 1
            throw .duplicateID(String(describing: old[i].id), in: .old)
        }
    }

    /// Builds the table of every old id (for a diff that looks up new ids one by one with `find`).
    ///
    /// - Throws: `.duplicateID(_, in: .old)` when an id is twice in `old`.
    @inlinable
    func buildOld(old: [Item], new: [Item]) throws(ListDiffError) {
        for p in 0..<partCount { try buildOld(part: p, old: old, new: new) }
    }

    /// Builds the table and matches the new rows hashed by `init` with the old rows, part by part:
    /// `newIndexOfOld[i - prefix]` becomes `j - prefix` and `oldIndexOfNew[j - prefix]` becomes
    /// `i - prefix` when `new[j]` and `old[i]` have the same id; a new id that matches no old row
    /// of `old[prefix..<prefix + newIndexOfOld.count]` that is still unmatched is a duplicate.
    ///
    /// - Throws: `.duplicateID(_, in: .old)` when an id is twice in `old`, otherwise
    ///   `.duplicateID(_, in: .new)` when an id is twice in `new`.
    @inlinable
    func match(
        old: [Item], new: [Item], prefix: Int, newIndexOfOld: inout [Int], oldIndexOfNew: inout [Int]
    ) throws(ListDiffError) {
        let oldMiddle = newIndexOfOld.count
        var duplicateInNew: Item.ID?
        for p in 0..<partCount {
            try buildOld(part: p, old: old, new: new)
            if duplicateInNew != nil { continue }
            for t in newStart[p]..<newStart[p + 1] {
                let word = words[t]
                let entry = findOrInsert(word, part: p, old: old, new: new)
                if entry == 0 { continue }
                let j = Int(truncatingIfNeeded: word & 0x7FFF_FFFF) - 1
                let i = entry - 1 - prefix
                guard entry > 0, i >= 0, i < oldMiddle, newIndexOfOld[i] < 0 else {
                    duplicateInNew = new[j].id
                    break
                }
                newIndexOfOld[i] = j - prefix
                oldIndexOfNew[j - prefix] = i
            }
        }
        if let duplicateInNew { throw .duplicateID(String(describing: duplicateInNew), in: .new) }
    }

    /// Builds the table and matches `new[prefix..<prefix + oldIndexOfNew.count]` in order, as
    /// `match` does, when the table has one part with room for those rows (`reserving`): a new row
    /// is first compared with the old rows it is likely to be (after the last match), and hashed
    /// only when it is none of them.
    ///
    /// - Throws: as `match`.
    @inlinable
    func matchInOrder(
        old: [Item], new: [Item], prefix: Int, newIndexOfOld: inout [Int], oldIndexOfNew: inout [Int]
    ) throws(ListDiffError) {
        precondition(partBits == 0, "matchInOrder needs a table of one part")
        try buildOld(part: 0, old: old, new: new)
        let oldMiddle = newIndexOfOld.count
        // Guesses of the old row a new row is: the one after the last match (`next`), the one after
        // that (a row deleted in between), and the one after the match before a row that moved
        // in (`resume`). A guess is taken only when the ids are equal and the old row is unmatched.
        var next = 0
        var resume = 0
        for j in 0..<oldIndexOfNew.count {
            let row = prefix + j
            let id = new[row].id
            func isGuess(_ candidate: Int) -> Bool {
                candidate < oldMiddle && newIndexOfOld[candidate] < 0 && old[prefix + candidate].id == id
            }
            let guess = isGuess(next) ? next : isGuess(next + 1) ? next + 1 : isGuess(resume) ? resume : -1
            if guess >= 0 {
                newIndexOfOld[guess] = j
                oldIndexOfNew[j] = guess
                next = guess + 1
                continue
            }
            let hash = UInt64(UInt(bitPattern: id.hashValue))
            let entry = findOrInsert(hash & Self.highBits | Self.newFlag | UInt64(row + 1), part: 0, old: old, new: new)
            if entry == 0 { continue }
            let i = entry - 1 - prefix
            guard entry > 0, i >= 0, i < oldMiddle, newIndexOfOld[i] < 0 else {
                throw .duplicateID(String(describing: id), in: .new)
            }
            newIndexOfOld[i] = j
            oldIndexOfNew[j] = i
            resume = next
            next = i + 1
        }
    }

    @inlinable
    static func part(_ hash: UInt64, bits: Int) -> Int {
        bits == 0 ? 0 : Int(truncatingIfNeeded: hash >> UInt64(64 - bits))
    }

    @inlinable
    func deallocate() {
        slots.deallocate()
        words.deallocate()
    }

    /// The number of parts; `newWords(part:)` are the new rows' words of one part.
    @inlinable
    var partCount: Int { 1 << partBits }

    /// The entry of a row with the same id as the row `word` describes, when there is one in
    /// part `p`; otherwise inserts `word` and returns 0. Ids are read only when hash bits agree.
    @inlinable
    func findOrInsert(_ word: UInt64, part p: Int, old: [Item], new: [Item]) -> Int {
        let start = regionStart[p]
        let mask = regionStart[p + 1] - start - 1
        let tag = word & Self.highBits
        var slot = Int(truncatingIfNeeded: word >> 32) & mask
        while true {
            let found = slots[start + slot]
            if found == 0 { break }
            if found & Self.highBits == tag {
                let code = Int(truncatingIfNeeded: found & 0x7FFF_FFFF)
                let ownCode = Int(truncatingIfNeeded: word & 0x7FFF_FFFF)
                let id = word & Self.newFlag == 0 ? old[ownCode - 1].id : new[ownCode - 1].id
                if found & Self.newFlag == 0 {
                    if old[code - 1].id == id { return code }
                } else if new[code - 1].id == id {
                    return -code
                }
            }
            slot = (slot + 1) & mask
        }
        slots[start + slot] = word
        return 0
    }

    /// The entry of `id` (see the type), without inserting it.
    @inlinable
    func find(_ id: Item.ID, old: [Item], new: [Item]) -> Int {
        let hash = UInt64(UInt(bitPattern: id.hashValue))
        let p = Self.part(hash, bits: partBits)
        let start = regionStart[p]
        let mask = regionStart[p + 1] - start - 1
        let tag = hash & Self.highBits
        var slot = Int(truncatingIfNeeded: hash >> 32) & mask
        while true {
            let found = slots[start + slot]
            if found == 0 { return 0 }
            if found & Self.highBits == tag {
                let code = Int(truncatingIfNeeded: found & 0x7FFF_FFFF)
                if found & Self.newFlag == 0 {
                    if old[code - 1].id == id { return code }
                } else if new[code - 1].id == id {
                    return -code
                }
            }
            slot = (slot + 1) & mask
        }
    }
}
