/// A row placed by a batch: `index` is in the list *after* the batch.
public struct IndexedItem<Item> {
    public var index: Int
    public var item: Item

    @inlinable
    public init(index: Int, item: Item) {
        self.index = index
        self.item = item
    }
}

extension IndexedItem: Equatable where Item: Equatable {}
extension IndexedItem: Hashable where Item: Hashable {}
extension IndexedItem: Sendable where Item: Sendable {}

/// A row that moves: `from` is an index in the list before the batch, `to` in the list after it.
public struct Move: Hashable, Sendable {
    public var from: Int
    public var to: Int

    @inlinable
    public init(from: Int, to: Int) {
        self.from = from
        self.to = to
    }
}

/// One `performBatchUpdates` call: turns a list `old` into a list `new` (docs/PROTOCOL.md, Applying a batch).
///
/// A batch is either *structural* (deletes, inserts, moves) or *pure updates*; never both.
/// Applying: remove the rows at `deletes` and at `moves[].from`; the rows left keep their order;
/// place inserted and moved rows at their new indices and fill the other slots, in order, with the
/// rows left. `count(new) == count(old) - deletes.count + inserts.count`.
public struct Batch<Item> {
    /// Indices in `old`, descending.
    public var deletes: [Int]
    /// Indices in `new`, ascending, each with its item.
    public var inserts: [IndexedItem<Item>]
    /// `from` in `old`, `to` in `new`; in no particular order.
    public var moves: [Move]
    /// In a pure-update batch, indices in the list (old and new are the same list), each with the
    /// item's new content. Empty in a structural batch.
    public var updates: [IndexedItem<Item>]

    @inlinable
    public init(
        deletes: [Int] = [], inserts: [IndexedItem<Item>] = [], moves: [Move] = [],
        updates: [IndexedItem<Item>] = []
    ) {
        self.deletes = deletes
        self.inserts = inserts
        self.moves = moves
        self.updates = updates
    }

    /// True when the batch changes nothing.
    @inlinable
    public var isEmpty: Bool { deletes.isEmpty && inserts.isEmpty && moves.isEmpty && updates.isEmpty }

    /// True when the batch has deletes, inserts or moves.
    @inlinable
    public var isStructural: Bool { !deletes.isEmpty || !inserts.isEmpty || !moves.isEmpty }

    /// Number of operations: deletes + inserts + moves + updates.
    @inlinable
    public var operationCount: Int { deletes.count + inserts.count + moves.count + updates.count }

    /// The same batch with every item transformed (for instance a chat into its JSON).
    @inlinable
    public func mapItems<T>(_ transform: (Item) throws -> T) rethrows -> Batch<T> {
        Batch<T>(
            deletes: deletes,
            inserts: try inserts.map { IndexedItem(index: $0.index, item: try transform($0.item)) },
            moves: moves,
            updates: try updates.map { IndexedItem(index: $0.index, item: try transform($0.item)) }
        )
    }
}

extension Batch: Equatable where Item: Equatable {}
extension Batch: Hashable where Item: Hashable {}
extension Batch: Sendable where Item: Sendable {}

/// An item that a diff can follow: an identity, and a revision that changes whenever what the row
/// displays changes.
public protocol DiffableItem {
    associatedtype ID: Hashable
    associatedtype Revision: Equatable
    var id: ID { get }
    var revision: Revision { get }
}
