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
    /// - Complexity: O((n + m) log(n + m)) for lists of n and m items, with hashing of every id.
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

    @inlinable
    static func computeDiff<Item: DiffableItem>(
        from old: [Item], to new: [Item], orderKeyChanged: Set<Item.ID>?
    ) throws(ListDiffError) -> ListDiffResult<Item> {
        // Phase 1: match ids. `newIndexOfOld[i]` is the new index of old[i] or -1 (deleted);
        // `oldIndexOfNew[j]` the old index of new[j] or -1 (inserted).
        var oldIndexByID = [Item.ID: Int](minimumCapacity: old.count + new.count / 8)
        for i in old.indices where oldIndexByID.updateValue(i, forKey: old[i].id) != nil {
            throw .duplicateID(String(describing: old[i].id), in: .old)
        }
        var newIndexOfOld = [Int](repeating: -1, count: old.count)
        var oldIndexOfNew = [Int](repeating: -1, count: new.count)
        for j in new.indices {
            let id = new[j].id
            if let i = oldIndexByID[id] {
                guard i >= 0, newIndexOfOld[i] < 0 else {
                    throw .duplicateID(String(describing: id), in: .new)
                }
                newIndexOfOld[i] = j
                oldIndexOfNew[j] = i
            } else {
                oldIndexByID[id] = -1 - j
            }
        }

        // Phase 2: each common item's rank among the common items, in old and in new order.
        // `commonNewRank[k]` belongs to the k-th common item in old order.
        var newRankOfNewIndex = [Int](repeating: -1, count: new.count)
        var commonCount = 0
        for j in new.indices where oldIndexOfNew[j] >= 0 {
            newRankOfNewIndex[j] = commonCount
            commonCount += 1
        }
        var commonOldIndex = [Int]()
        commonOldIndex.reserveCapacity(commonCount)
        var commonNewRank = [Int]()
        commonNewRank.reserveCapacity(commonCount)
        for i in old.indices where newIndexOfOld[i] >= 0 {
            commonOldIndex.append(i)
            commonNewRank.append(newRankOfNewIndex[newIndexOfOld[i]])
        }

        // Phase 3: which common items may move, and the choice of those that stay.
        let stays: [Bool]
        if let orderKeyChanged {
            var mayMove = [Bool](repeating: false, count: commonCount)
            if !orderKeyChanged.isEmpty {
                for k in 0..<commonCount where orderKeyChanged.contains(old[commonOldIndex[k]].id) {
                    mayMove[k] = true
                }
            }
            do {
                stays = try FewestMoves.select(newRanks: commonNewRank, mayMove: mayMove)
            } catch {
                throw .unchangedKeysReordered(
                    String(describing: old[commonOldIndex[error.earlier]].id),
                    String(describing: old[commonOldIndex[error.later]].id))
            }
        } else {
            stays = FewestMoves.select(newRanks: commonNewRank)
        }

        // Phase 4: the batches.
        var deletes = [Int]()
        for i in old.indices.reversed() where newIndexOfOld[i] < 0 {
            deletes.append(i)
        }
        var inserts = [IndexedItem<Item>]()
        for j in new.indices where oldIndexOfNew[j] < 0 {
            inserts.append(IndexedItem(index: j, item: new[j]))
        }
        var moves = [Move]()
        for k in 0..<commonCount where !stays[k] {
            let i = commonOldIndex[k]
            moves.append(Move(from: i, to: newIndexOfOld[i]))
        }
        var updates = [IndexedItem<Item>]()
        for j in new.indices {
            let i = oldIndexOfNew[j]
            if i >= 0, old[i].revision != new[j].revision {
                updates.append(IndexedItem(index: j, item: new[j]))
            }
        }
        let structural = deletes.isEmpty && inserts.isEmpty && moves.isEmpty
            ? nil : Batch(deletes: deletes, inserts: inserts, moves: moves)
        return ListDiffResult(structural: structural, updates: updates.isEmpty ? nil : Batch(updates: updates))
    }
}
