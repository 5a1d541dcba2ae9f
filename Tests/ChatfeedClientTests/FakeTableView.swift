import ChatfeedUIKit
import ChatModel
import ListDiff

/// A table view that enforces UIKit's rules: every batch is checked with `UIKitBatchModel` against
/// the rows it shows, the data source must match the rows after each batch (UIKit's "invalid
/// number of rows" exception), nothing is animated outside a window, row calls happen only inside
/// a batch. Animations complete when the test says; the view goes in and out of a window when the
/// test says. What UIKit would crash on is recorded in `violations`.
@MainActor
final class FakeTableView: BatchUpdatingView {
    /// The data source: read as UIKit reads it, when a batch ends and on reload.
    var dataSource: () -> [Chat] = { [] }
    /// What the cells show (content included: a row not reloaded keeps its old content).
    private(set) var shown: [Chat] = []
    var isInWindow = true
    private(set) var violations: [String] = []
    private(set) var batchCount = 0
    private(set) var reloadCount = 0
    private var recording: Batch<Int>?
    private var completions: [(Bool) -> Void] = []

    /// Animations that have not completed yet.
    var animating: Int { completions.count }

    func performBatch(_ updates: () -> Void, completion: @escaping (Bool) -> Void) {
        if !isInWindow { violations.append("performBatchUpdates outside a window") }
        if !completions.isEmpty { violations.append("a batch began while another was animating") }
        if recording != nil { violations.append("nested performBatchUpdates") }
        let before = shown
        recording = Batch()
        updates()
        let batch = recording!
        recording = nil
        batchCount += 1
        let after = dataSource()
        let withItems = Batch<Chat>(
            deletes: batch.deletes.sorted(by: >),
            inserts: batch.inserts.map { $0.index }.sorted().map { IndexedItem(index: $0, item: after[safe: $0] ?? Self.missing) },
            moves: batch.moves,
            updates: batch.updates.map { IndexedItem(index: $0.index, item: after[safe: $0.index] ?? Self.missing) })
        do {
            let result = try UIKitBatchModel.apply(withItems, to: before)
            if result.count != after.count {
                violations.append("invalid number of rows: \(result.count) after the batch, the data source has \(after.count)")
            } else if result.map(\.id) != after.map(\.id) {
                violations.append("rows after the batch differ from the data source")
            }
            shown = result
        } catch {
            violations.append("UIKit would raise: \(error)")
            shown = after
        }
        completions.append(completion)
    }

    func deleteRows(_ rows: [Int]) { record { $0.deletes += rows } }
    func insertRows(_ rows: [Int]) { record { $0.inserts += rows.map { IndexedItem(index: $0, item: 0) } } }
    func moveRow(_ from: Int, to: Int) { record { $0.moves.append(Move(from: from, to: to)) } }
    func reloadRows(_ rows: [Int]) { record { $0.updates += rows.map { IndexedItem(index: $0, item: 0) } } }

    func reloadAllRows() {
        if recording != nil { violations.append("reloadData inside performBatchUpdates") }
        reloadCount += 1
        shown = dataSource()
    }

    /// Ends the running animations: their completions run.
    func completeAnimations() {
        let pending = completions
        completions.removeAll()
        for completion in pending { completion(true) }
    }

    private func record(_ change: (inout Batch<Int>) -> Void) {
        guard recording != nil else {
            violations.append("row changes outside performBatchUpdates")
            return
        }
        change(&recording!)
    }

    private static let missing = Chat(
        id: "<no row in the data source>", title: "", createdAt: 0, lastMessage: nil, lastMessageDate: 0, unread: 0, revision: 0)
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
