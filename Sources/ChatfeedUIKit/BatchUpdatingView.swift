/// What the adapter needs of a table or collection view: rows of one section, by index.
/// `UITableView` and `UICollectionView` conform where UIKit exists; tests use a fake that
/// enforces UIKit's rules.
@MainActor
public protocol BatchUpdatingView: AnyObject {
    /// True while the view is in a window. Outside one, animated updates are lost or crash, so
    /// the adapter reloads instead.
    var isInWindow: Bool { get }
    /// Applies the row changes made in `updates` as one animation (`performBatchUpdates`) and
    /// calls `completion` when the animation ends. `updates` runs before this returns.
    func performBatch(_ updates: () -> Void, completion: @escaping (Bool) -> Void)
    /// Rows of the list before the batch, in any order.
    func deleteRows(_ rows: [Int])
    /// Rows of the list after the batch.
    func insertRows(_ rows: [Int])
    /// `from` in the list before the batch, `to` in the list after it.
    func moveRow(_ from: Int, to: Int)
    /// Rows whose content changed (a pure-update batch: one index space).
    func reloadRows(_ rows: [Int])
    /// Reloads everything from the data source, without animation.
    func reloadAllRows()
}
