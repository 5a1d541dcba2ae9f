import ListDiff

/// A row for diff tests: an id and a revision.
public struct TestItem: DiffableItem, Hashable, Sendable, CustomStringConvertible {
    public var id: Int
    public var revision: Int

    public init(id: Int, revision: Int = 0) {
        self.id = id
        self.revision = revision
    }

    public var description: String { revision == 0 ? "\(id)" : "\(id)r\(revision)" }
}

extension Array where Element == TestItem {
    /// Items with revision 0 from ids.
    public init(ids: [Int]) { self = ids.map { TestItem(id: $0) } }
}
