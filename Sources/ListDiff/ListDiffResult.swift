/// Which list of a diff an error is about.
public enum ListSide: String, Hashable, Sendable {
    case old
    case new
}

/// Why two lists cannot be diffed.
public enum ListDiffError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The same id appears twice in one list.
    case duplicateID(String, in: ListSide)
    /// Two items whose order key did not change are in a different relative order in `new`, so
    /// they cannot both stay: the set of changed keys given to the diff is wrong.
    case unchangedKeysReordered(String, String)

    public var description: String {
        switch self {
        case .duplicateID(let id, let side):
            "duplicate id \(id) in the \(side.rawValue) list"
        case .unchangedKeysReordered(let first, let second):
            "items \(first) and \(second) changed their relative order although neither's order key changed"
        }
    }
}

/// The result of a diff: a structural batch, then a pure-update batch for the rows that stay but
/// changed (its indices are in the new list). Either may be absent.
public struct ListDiffResult<Item> {
    /// Deletes, inserts and moves; nil when the lists have the same ids in the same places.
    public var structural: Batch<Item>?
    /// Pure updates (indices in the new list), applied after `structural`; nil when no row that
    /// stays changed its revision.
    public var updates: Batch<Item>?

    @inlinable
    public init(structural: Batch<Item>?, updates: Batch<Item>?) {
        self.structural = structural
        self.updates = updates
    }

    /// The batches to apply, in order: none, one or two.
    @inlinable
    public var batches: [Batch<Item>] {
        var result: [Batch<Item>] = []
        if let structural { result.append(structural) }
        if let updates { result.append(updates) }
        return result
    }
}

extension ListDiffResult: Equatable where Item: Equatable {}
extension ListDiffResult: Sendable where Item: Sendable {}
