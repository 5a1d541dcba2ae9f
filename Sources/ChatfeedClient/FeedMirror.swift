import ChatModel
import ListDiff
import WireProtocol

/// The client's copy of one subscription's list. Every notification is checked against it — the
/// next `seq`, UIKit's rules, rows that are updated keep their id, the announced count — before it
/// becomes an update; a notification that fails leaves the mirror as it was and throws.
struct FeedMirror: Sendable {
    var subscription: String
    var chats: [Chat]
    var lastSeq: Int64 = 0
    var epoch: Int

    init(subscription: String, chats: [Chat], epoch: Int) {
        self.subscription = subscription
        self.chats = chats
        self.epoch = epoch
    }

    /// The update a subscribe response makes: its list, as a snapshot.
    func snapshot(total: Int, unread: UnreadCounters) -> FeedUpdate {
        FeedUpdate(kind: .snapshot, seq: 0, steps: [], chats: chats, total: total, unread: unread, epoch: epoch)
    }

    /// Applies the batches of a resumed subscribe (`known` → the current list) to the mirror.
    /// - Complexity: O(n + k log k) per batch, for n rows and k operations.
    mutating func resume(
        subscription: String, epoch: Int, batches: [Batch<Chat>], count: Int, total: Int, unread: UnreadCounters
    ) throws(FeedError) -> FeedUpdate {
        var list = chats
        var steps: [FeedStep] = []
        for batch in batches where !batch.isEmpty {
            list = try validated(batch, on: list, seq: 0, subscription: subscription)
            steps.append(FeedStep(batch: batch, chats: list))
        }
        guard list.count == count else {
            throw .countMismatch(subscription: subscription, seq: 0, announced: count, mirrored: list.count)
        }
        self = FeedMirror(subscription: subscription, chats: list, epoch: epoch)
        return FeedUpdate(kind: .batches, seq: 0, steps: steps, chats: list, total: total, unread: unread, epoch: epoch)
    }

    /// Applies a `feed.batch` or `feed.reset` of this subscription.
    /// - Complexity: O(n + k log k) for n rows and k operations (a reset: O(its rows)).
    mutating func apply(_ notification: WireFeedNotification) throws(FeedError) -> FeedUpdate {
        guard notification.seq == lastSeq + 1 else {
            throw .seqGap(subscription: subscription, expected: lastSeq + 1, received: notification.seq)
        }
        switch notification {
        case .reset(let reset):
            guard reset.items.count == reset.count else {
                throw .countMismatch(subscription: subscription, seq: reset.seq, announced: reset.count, mirrored: reset.items.count)
            }
            chats = reset.items
            lastSeq = reset.seq
            return FeedUpdate(kind: .reset, seq: reset.seq, steps: [], chats: chats, total: reset.total, unread: reset.unread, epoch: epoch)
        case .batch(let params):
            let batch = params.batch
            let list = batch.isEmpty ? chats : try validated(batch, on: chats, seq: params.seq, subscription: subscription)
            guard list.count == params.count else {
                throw .countMismatch(subscription: subscription, seq: params.seq, announced: params.count, mirrored: list.count)
            }
            chats = list
            lastSeq = params.seq
            return FeedUpdate(
                kind: .batches, seq: params.seq, steps: batch.isEmpty ? [] : [FeedStep(batch: batch, chats: list)],
                chats: list, total: params.total, unread: params.unread, epoch: epoch)
        }
    }

    private func validated(
        _ batch: Batch<Chat>, on list: [Chat], seq: Int64, subscription: String
    ) throws(FeedError) -> [Chat] {
        let result: [Chat]
        do {
            result = try UIKitBatchModel.apply(batch, to: list)
        } catch {
            throw .invalidBatch(subscription: subscription, seq: seq, violation: error)
        }
        for update in batch.updates where list[update.index].id != update.item.id {
            throw .updateOfAnotherRow(
                subscription: subscription, seq: seq, index: update.index, mirrored: list[update.index].id,
                received: update.item.id)
        }
        return result
    }
}
