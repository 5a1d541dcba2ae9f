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
    func snapshot(total: Int, unread: UnreadCounters) -> FeedDelivery {
        .list(FeedDelivery.Header(kind: .snapshot, seq: 0, total: total, unread: unread, epoch: epoch), chats)
    }

    /// Applies the batches of a resumed subscribe (`known` → the current list) to the mirror.
    /// - Complexity: O(n + k log k) per batch, for n rows and k operations.
    mutating func resume(
        subscription: String, epoch: Int, batches: [Batch<Chat>], count: Int, total: Int, unread: UnreadCounters
    ) throws(FeedError) -> FeedDelivery {
        var list = chats
        var applied: [Batch<Chat>] = []
        for batch in batches where !batch.isEmpty {
            list = try validated(batch, on: list, seq: 0, subscription: subscription)
            applied.append(batch)
        }
        guard list.count == count else {
            throw .countMismatch(subscription: subscription, seq: 0, announced: count, mirrored: list.count)
        }
        self = FeedMirror(subscription: subscription, chats: list, epoch: epoch)
        return .batches(FeedDelivery.Header(kind: .batches, seq: 0, total: total, unread: unread, epoch: epoch), applied)
    }

    /// Applies a `feed.batch` or `feed.reset` of this subscription.
    /// - Complexity: O(n + k log k) for n rows and k operations (a reset: O(its rows)).
    mutating func apply(_ notification: WireFeedNotification) throws(FeedError) -> FeedDelivery {
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
            return .list(
                FeedDelivery.Header(kind: .reset, seq: reset.seq, total: reset.total, unread: reset.unread, epoch: epoch),
                chats)
        case .batch(let params):
            let batch = params.batch
            let list = batch.isEmpty ? chats : try validated(batch, on: chats, seq: params.seq, subscription: subscription)
            guard list.count == params.count else {
                throw .countMismatch(subscription: subscription, seq: params.seq, announced: params.count, mirrored: list.count)
            }
            chats = list
            lastSeq = params.seq
            return .batches(
                FeedDelivery.Header(kind: .batches, seq: params.seq, total: params.total, unread: params.unread, epoch: epoch),
                batch.isEmpty ? [] : [batch])
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

/// What the client buffers for the app between a notification and the app asking for it: the
/// batches, not the list after them (the iterator applies them to the list it last delivered).
/// While an app falls behind with `maxInFlight: 0`, each buffered update costs what it changed.
enum FeedDelivery: Sendable {
    struct Header: Sendable {
        var kind: FeedUpdate.Kind
        var seq: Int64
        var total: Int
        var unread: UnreadCounters
        var epoch: Int
    }

    /// A snapshot or a reset: the whole list.
    case list(Header, [Chat])
    /// Batches already validated on the mirror, to apply in order.
    case batches(Header, [Batch<Chat>])

    /// The update this delivery makes of `list` (the list after the previous one), which it
    /// replaces with the list after the update.
    /// - Complexity: O(n + k log k) per batch, for n rows and k operations.
    func update(from list: inout [Chat]) throws -> FeedUpdate {
        switch self {
        case .list(let header, let chats):
            list = chats
            return FeedUpdate(
                kind: header.kind, seq: header.seq, steps: [], chats: chats, total: header.total,
                unread: header.unread, epoch: header.epoch)
        case .batches(let header, let batches):
            var steps: [FeedStep] = []
            for batch in batches {
                list = try UIKitBatchModel.apply(batch, to: list)
                steps.append(FeedStep(batch: batch, chats: list))
            }
            return FeedUpdate(
                kind: .batches, seq: header.seq, steps: steps, chats: list, total: header.total,
                unread: header.unread, epoch: header.epoch)
        }
    }
}
