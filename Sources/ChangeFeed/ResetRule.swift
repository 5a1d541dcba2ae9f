import ListDiff

/// When a subscriber gets `feed.reset` (its whole list) instead of batches (docs/PROTOCOL.md, The live feed): only when
/// the batches would be larger on the wire than `threshold` × the reset.
///
/// Sizes are estimated from counts alone, in bytes of JSON: a chat's JSON is far larger than an
/// index, so a batch that carries at most one chat per row of the list it leads to stays below a
/// reset of that list whatever its deletes and moves, unless they are many times the rows. Every
/// place that chooses between batches and a snapshot (the feed's coalesced batches, a resume from
/// `known`) applies this one rule.
public struct ResetRule: Sendable, Hashable {
    /// Estimated bytes of a chat carried by an insert, an update or a row of a reset.
    public static let chatBytes = 200
    /// Estimated bytes of one delete (an index).
    public static let deleteBytes = 8
    /// Estimated bytes of one move (`{"from","to"}`).
    public static let moveBytes = 24
    /// Estimated bytes of a notification's envelope (`jsonrpc`, `method`, `subscription`, `seq`,
    /// counts, the keys of the arrays).
    public static let notificationBytes = 128

    /// Batches are sent unless they would be larger than `threshold` × the reset.
    public var threshold: Double

    public init(threshold: Double) {
        self.threshold = threshold
    }

    /// The estimated size of one notification carrying `batch`. O(1).
    public static func estimatedBytes<Item>(of batch: Batch<Item>) -> Int {
        notificationBytes + (batch.inserts.count + batch.updates.count) * chatBytes
            + batch.deletes.count * deleteBytes + batch.moves.count * moveBytes
    }

    /// The estimated size of a reset (or a snapshot) of `rows` chats. O(1).
    public static func estimatedResetBytes(rows: Int) -> Int {
        notificationBytes + rows * chatBytes
    }

    /// True when `batches` (one batch, or a structural batch and its deferred batch) would be
    /// larger than `threshold` × a reset of the `rows` chats of the list they lead to, so that a
    /// reset should be sent instead. O(number of batches).
    public func prefersReset<Item>(over batches: [Batch<Item>], rows: Int) -> Bool {
        prefersReset(batchBytes: batches.reduce(0) { $0 + Self.estimatedBytes(of: $1) }, rows: rows)
    }

    /// `prefersReset(over:rows:)` for a structural batch and its deferred batch, either absent. O(1).
    public func prefersReset<Item>(over structural: Batch<Item>?, _ updates: Batch<Item>?, rows: Int) -> Bool {
        prefersReset(batchBytes: (structural.map(Self.estimatedBytes) ?? 0) + (updates.map(Self.estimatedBytes) ?? 0), rows: rows)
    }

    private func prefersReset(batchBytes: Int, rows: Int) -> Bool {
        Double(batchBytes) > threshold * Double(Self.estimatedResetBytes(rows: rows))
    }
}
