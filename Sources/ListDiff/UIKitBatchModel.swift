/// A rule of UIKit's `performBatchUpdates` that a batch can break (docs/PROTOCOL.md, Applying a batch).
public enum BatchRule: String, Hashable, Sendable, CaseIterable {
    case indexOutOfRange = "every index is in range"
    case duplicateIndex = "no index twice in one list"
    case deletesNotDescending = "deletes are in descending order"
    case insertsNotAscending = "inserts are in ascending order"
    case deleteAndUpdate = "no row is both deleted and updated"
    case deleteAndMove = "no row is both deleted and moved"
    case moveAndUpdate = "no row is both moved and updated"
    case insertAndMoveToSameIndex = "no insert and move to the same index"
    case updatesInStructuralBatch = "updates never share a batch with deletes, inserts or moves"
}

/// A batch that UIKit would refuse (or that would corrupt the table), with the rule it breaks.
public struct BatchRuleViolation: Error, Hashable, Sendable, CustomStringConvertible {
    public var rule: BatchRule
    /// Which entry broke the rule, e.g. "deletes[1] = 5 after 3".
    public var detail: String

    public init(_ rule: BatchRule, _ detail: String) {
        self.rule = rule
        self.detail = detail
    }

    public var description: String { "batch breaks the rule '\(rule.rawValue)': \(detail)" }
}

/// A model of how `UITableView.performBatchUpdates` applies a batch, checking every rule of
/// docs/PROTOCOL.md, Applying a batch first. Clients can mirror the feed with it; the tests use it as their oracle.
public enum UIKitBatchModel {
    /// Applies `batch` to `list` as UIKit would and returns the new list.
    ///
    /// Structural batch: remove the rows at `deletes` and `moves[].from`, keep the rest in order,
    /// put inserted and moved rows at their new indices and fill the other slots in order with the
    /// rows left. Pure-update batch: replace the rows at `updates`.
    ///
    /// - Throws: `BatchRuleViolation` naming the first rule broken; the list is then unchanged.
    /// - Complexity: O(n + k log k) for n rows and k operations.
    public static func apply<Item>(_ batch: Batch<Item>, to list: [Item]) throws(BatchRuleViolation) -> [Item] {
        try validate(batch, rowCount: list.count)
        if !batch.isStructural {
            var result = list
            for update in batch.updates { result[update.index] = update.item }
            return result
        }
        let newCount = list.count - batch.deletes.count + batch.inserts.count
        var placed = [Item?](repeating: nil, count: newCount)
        var removed = [Bool](repeating: false, count: list.count)
        for index in batch.deletes { removed[index] = true }
        for move in batch.moves {
            removed[move.from] = true
            placed[move.to] = list[move.from]
        }
        for insert in batch.inserts { placed[insert.index] = insert.item }
        var remaining = list.indices.lazy.filter { !removed[$0] }.makeIterator()
        var result = [Item]()
        result.reserveCapacity(newCount)
        for slot in placed {
            if let slot {
                result.append(slot)
            } else if let next = remaining.next() {
                result.append(list[next])
            }
        }
        return result
    }

    /// Checks every rule of docs/PROTOCOL.md, Applying a batch for a batch applied to a list of `rowCount` rows.
    ///
    /// - Throws: `BatchRuleViolation` naming the first rule broken.
    /// - Complexity: O(k log k) for k operations.
    public static func validate<Item>(_ batch: Batch<Item>, rowCount: Int) throws(BatchRuleViolation) {
        let oldCount = rowCount
        let newCount = oldCount - batch.deletes.count + batch.inserts.count

        // Deletes: in range of the old list, strictly descending.
        for (position, index) in batch.deletes.enumerated() {
            guard (0..<oldCount).contains(index) else {
                throw BatchRuleViolation(.indexOutOfRange, "deletes[\(position)] = \(index) with \(oldCount) rows")
            }
            if position > 0 {
                let previous = batch.deletes[position - 1]
                if previous == index {
                    throw BatchRuleViolation(.duplicateIndex, "delete \(index) appears twice")
                }
                if previous < index {
                    throw BatchRuleViolation(.deletesNotDescending, "deletes[\(position)] = \(index) after \(previous)")
                }
            }
        }
        guard newCount >= 0 else {
            throw BatchRuleViolation(.indexOutOfRange, "more deletes than rows")
        }
        let deleted = Set(batch.deletes)

        // Moves: from in the old list, to in the new list, neither twice, never a deleted row.
        var movedFrom = Set<Int>()
        var movedTo = Set<Int>()
        for (position, move) in batch.moves.enumerated() {
            guard (0..<oldCount).contains(move.from) else {
                throw BatchRuleViolation(.indexOutOfRange, "moves[\(position)].from = \(move.from) with \(oldCount) rows")
            }
            guard (0..<newCount).contains(move.to) else {
                throw BatchRuleViolation(.indexOutOfRange, "moves[\(position)].to = \(move.to) with \(newCount) rows after the batch")
            }
            guard movedFrom.insert(move.from).inserted else {
                throw BatchRuleViolation(.duplicateIndex, "row \(move.from) is moved twice")
            }
            guard movedTo.insert(move.to).inserted else {
                throw BatchRuleViolation(.duplicateIndex, "two moves go to index \(move.to)")
            }
            if deleted.contains(move.from) {
                throw BatchRuleViolation(.deleteAndMove, "row \(move.from) is deleted and moved")
            }
        }

        // Inserts: in the new list, strictly ascending, never where a row moves to.
        for (position, insert) in batch.inserts.enumerated() {
            let index = insert.index
            guard (0..<newCount).contains(index) else {
                throw BatchRuleViolation(.indexOutOfRange, "inserts[\(position)] = \(index) with \(newCount) rows after the batch")
            }
            if position > 0 {
                let previous = batch.inserts[position - 1].index
                if previous == index {
                    throw BatchRuleViolation(.duplicateIndex, "insert \(index) appears twice")
                }
                if previous > index {
                    throw BatchRuleViolation(.insertsNotAscending, "inserts[\(position)] = \(index) after \(previous)")
                }
            }
            if movedTo.contains(index) {
                throw BatchRuleViolation(.insertAndMoveToSameIndex, "a row is inserted and moved to index \(index)")
            }
        }

        // Updates: in range, not twice, and (UIKit's reload rule) in a batch of their own.
        var updated = Set<Int>()
        for (position, update) in batch.updates.enumerated() {
            let index = update.index
            guard (0..<oldCount).contains(index) else {
                throw BatchRuleViolation(.indexOutOfRange, "updates[\(position)] = \(index) with \(oldCount) rows")
            }
            guard updated.insert(index).inserted else {
                throw BatchRuleViolation(.duplicateIndex, "update \(index) appears twice")
            }
            if deleted.contains(index) {
                throw BatchRuleViolation(.deleteAndUpdate, "row \(index) is deleted and updated")
            }
            if movedFrom.contains(index) {
                throw BatchRuleViolation(.moveAndUpdate, "row \(index) is moved and updated")
            }
        }
        if !batch.updates.isEmpty, batch.isStructural {
            throw BatchRuleViolation(
                .updatesInStructuralBatch,
                "\(batch.updates.count) updates with \(batch.deletes.count) deletes, \(batch.inserts.count) inserts and \(batch.moves.count) moves")
        }
    }
}
