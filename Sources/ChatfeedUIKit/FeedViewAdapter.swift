import ChatModel
import ChatfeedClient

/// Applies a subscription to a table or collection view, one update at a time (seed 003's
/// serialized queue, with the engine's flow control doing the waiting).
///
/// Per update: each batch in its own `performBatch` — the data source (`chats`) set inside it,
/// the deferred updates in a second one — and the acknowledgement once the last animation has
/// completed. A reload update (a snapshot or a reset), or any update while the view is not in a
/// window, sets the data source, reloads and acknowledges. Use `chats` as the data source.
@MainActor
public final class FeedViewAdapter {
    /// The rows the view shows: the data source. Index i is row i of section 0.
    public private(set) var chats: [Chat] = []
    /// Chats in the subscription's list, whatever its window.
    public private(set) var total = 0
    /// The unread counters of the subscription's list (`unread.unmutedMessages`: the badge).
    public private(set) var unread = UnreadCounters()
    /// The view; held weakly (the view usually owns what owns the adapter).
    public weak var view: (any BatchUpdatingView)?
    /// Called after each update is applied (to refresh a badge, a title).
    public var didApply: ((FeedUpdate) -> Void)?

    public init(view: any BatchUpdatingView) {
        self.view = view
    }

    /// Applies the subscription's updates until it ends; throws the error that ended it.
    public func run(_ subscription: FeedSubscription) async throws {
        for try await update in subscription {
            await apply(update)
            await subscription.acknowledge(update)
        }
    }

    /// Applies one update to the view; returns when its last animation has completed.
    public func apply(_ update: FeedUpdate) async {
        total = update.total
        unread = update.unread
        defer { didApply?(update) }
        for step in update.steps {
            guard let view, view.isInWindow, !update.isReload else { break }
            await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                view.performBatch({
                    self.chats = step.chats
                    if !step.batch.deletes.isEmpty { view.deleteRows(step.batch.deletes) }
                    if !step.batch.inserts.isEmpty { view.insertRows(step.batch.inserts.map(\.index)) }
                    for move in step.batch.moves { view.moveRow(move.from, to: move.to) }
                    if !step.batch.updates.isEmpty { view.reloadRows(step.batch.updates.map(\.index)) }
                }, completion: { _ in finished.resume() })
            }
        }
        // A reload, a view out of its window (perhaps since a step above), or counts only.
        if chats != update.chats {
            chats = update.chats
            view?.reloadAllRows()
        }
    }
}
