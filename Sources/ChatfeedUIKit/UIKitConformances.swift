#if canImport(UIKit)
import UIKit

extension UITableView: BatchUpdatingView {
    public var isInWindow: Bool { window != nil }

    public func performBatch(_ updates: () -> Void, completion: @escaping (Bool) -> Void) {
        withoutActuallyEscaping(updates) { performBatchUpdates($0, completion: completion) }
    }

    public func deleteRows(_ rows: [Int]) { deleteRows(at: rows.map { IndexPath(row: $0, section: 0) }, with: .automatic) }
    public func insertRows(_ rows: [Int]) { insertRows(at: rows.map { IndexPath(row: $0, section: 0) }, with: .automatic) }
    public func moveRow(_ from: Int, to: Int) { moveRow(at: IndexPath(row: from, section: 0), to: IndexPath(row: to, section: 0)) }
    /// Reconfigures the cells in place (no fade, no blink: seed 003's "reload flicker").
    public func reloadRows(_ rows: [Int]) { reconfigureRows(at: rows.map { IndexPath(row: $0, section: 0) }) }
    public func reloadAllRows() { reloadData() }
}

extension UICollectionView: BatchUpdatingView {
    public var isInWindow: Bool { window != nil }

    public func performBatch(_ updates: () -> Void, completion: @escaping (Bool) -> Void) {
        withoutActuallyEscaping(updates) { performBatchUpdates($0, completion: completion) }
    }

    public func deleteRows(_ rows: [Int]) { deleteItems(at: rows.map { IndexPath(item: $0, section: 0) }) }
    public func insertRows(_ rows: [Int]) { insertItems(at: rows.map { IndexPath(item: $0, section: 0) }) }
    public func moveRow(_ from: Int, to: Int) { moveItem(at: IndexPath(item: from, section: 0), to: IndexPath(item: to, section: 0)) }
    public func reloadRows(_ rows: [Int]) { reconfigureItems(at: rows.map { IndexPath(item: $0, section: 0) }) }
    public func reloadAllRows() { reloadData() }
}
#endif
