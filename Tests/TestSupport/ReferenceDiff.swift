import ListDiff

/// A slow, obviously correct reference for the choice of rows that stay (docs/PROTOCOL.md, Applying a batch), and checks of
/// diff results against the UIKit batch model.
public enum ReferenceDiff {
    /// The weight of a choice of staying rows: first how many rows stay (the fewest moves), then how
    /// many of them did not go up.
    public struct Weight: Comparable, Hashable, Sendable, CustomStringConvertible {
        public var notUp: Int
        public var up: Int

        public init(notUp: Int, up: Int) {
            self.notUp = notUp
            self.up = up
        }

        public var stays: Int { notUp + up }

        public static func < (a: Weight, b: Weight) -> Bool { (a.stays, a.notUp) < (b.stays, b.notUp) }
        public static func + (a: Weight, b: Weight) -> Weight { Weight(notUp: a.notUp + b.notUp, up: a.up + b.up) }
        public var description: String { "(notUp: \(notUp), up: \(up))" }
    }

    /// The common items of two lists in old order, with their rank among the common items in
    /// old and in new order.
    public struct CommonItem<ID: Hashable> {
        public var id: ID
        public var oldRank: Int
        public var newRank: Int
        public var wentUp: Bool { newRank < oldRank }
    }

    public static func commonItems<Item: DiffableItem>(_ old: [Item], _ new: [Item]) -> [CommonItem<Item.ID>] {
        let newIDs = new.map(\.id)
        let oldIDs = Set(old.map(\.id))
        let commonNew = newIDs.filter { oldIDs.contains($0) }
        var newRank: [Item.ID: Int] = [:]
        for (rank, id) in commonNew.enumerated() { newRank[id] = rank }
        return old.map(\.id).filter { newRank[$0] != nil }.enumerated().map {
            CommonItem(id: $0.element, oldRank: $0.offset, newRank: newRank[$0.element]!)
        }
    }

    /// The best weight of a set of staying rows that contains every row not in `mayMove` (all rows
    /// may move when nil) and is increasing in both orders, by an O(c²) dynamic program.
    public static func optimalWeight<Item: DiffableItem>(
        old: [Item], new: [Item], mayMove: Set<Item.ID>? = nil
    ) -> Weight? {
        let common = commonItems(old, new)
        let mustStay = common.map { item in mayMove.map { !$0.contains(item.id) } ?? false }
        // best[k]: best weight of a valid chain ending at k that includes every must-stay item
        // before k; nil when impossible.
        var best = [Weight?](repeating: nil, count: common.count)
        for k in common.indices {
            let own = common[k].wentUp ? Weight(notUp: 0, up: 1) : Weight(notUp: 1, up: 0)
            var chain: Weight? = (0..<k).contains { mustStay[$0] } ? nil : Weight(notUp: 0, up: 0)
            for p in stride(from: k - 1, through: 0, by: -1) {
                if let candidate = best[p], common[p].newRank < common[k].newRank {
                    if chain == nil || chain! < candidate { chain = candidate }
                }
                if mustStay[p] { break }  // a chain may not skip a must-stay item
            }
            best[k] = chain.map { $0 + own }
        }
        var result: Weight? = nil
        for k in common.indices where best[k] != nil {
            if !((k + 1)..<common.count).contains(where: { mustStay[$0] }) {
                if result == nil || result! < best[k]! { result = best[k] }
            }
        }
        return common.isEmpty ? Weight(notUp: 0, up: 0) : result
    }

    /// The weight of the rows a diff result keeps in place (common rows that are not moved).
    public static func stayWeight<Item: DiffableItem>(
        of result: ListDiffResult<Item>, old: [Item], new: [Item]
    ) -> Weight {
        let movedOldIndices = Set(result.structural?.moves.map(\.from) ?? [])
        let moved = Set(movedOldIndices.map { old[$0].id })
        var weight = Weight(notUp: 0, up: 0)
        for item in commonItems(old, new) where !moved.contains(item.id) {
            weight = weight + (item.wentUp ? Weight(notUp: 0, up: 1) : Weight(notUp: 1, up: 0))
        }
        return weight
    }

    /// Why a diff result does not turn `old` into `new` under the UIKit model, or nil when it does:
    /// every batch is valid, the structural batch comes first and has no updates, the second has
    /// only updates, and updates name exactly the common rows whose revision changed.
    public static func problem<Item: DiffableItem & Equatable>(
        with result: ListDiffResult<Item>, old: [Item], new: [Item]
    ) -> String? {
        var list = old
        if let structural = result.structural {
            if !structural.updates.isEmpty { return "structural batch has updates" }
            if !structural.isStructural { return "structural batch is empty" }
        }
        if let updates = result.updates, updates.isStructural || updates.updates.isEmpty {
            return "update batch is not a non-empty pure-update batch"
        }
        for batch in result.batches {
            do { list = try UIKitBatchModel.apply(batch, to: list) } catch { return "\(error)" }
        }
        if list != new { return "applying gives \(list), expected \(new)" }
        let oldRevision = Dictionary(uniqueKeysWithValues: old.map { ($0.id, $0.revision) })
        let changed = new.filter { item in oldRevision[item.id].map { $0 != item.revision } ?? false }.count
        let updated = result.updates?.updates.count ?? 0
        if changed != updated { return "\(updated) updates for \(changed) changed rows" }
        return nil
    }
}
