import ChangeFeed
import ChatModel
import ListDiff
import Testing
import TestSupport

/// Subscribers are bounded: a cap on subscriptions, and a waiting window tracks at most
/// max(`maxPendingChats`, 2 × its window) changed chats, then owes a reset of its window.
@Suite("Bounded subscribers")
struct BoundedSubscriberTests {
    @Test func oneSubscriptionOverTheCapIsRefusedUntilOneEnds() throws {
        let feed = LiveFeed(chats: [], options: FeedOptions(maxSubscriptions: 3))
        let first = try feed.subscribe(limit: 5, maxInFlight: 1)
        _ = try feed.subscribe(limit: nil, maxInFlight: 0)
        _ = try feed.subscribe(limit: 1, maxInFlight: 2)
        #expect {
            try feed.subscribe(limit: 5, maxInFlight: 1)
        } throws: { error in
            guard case ChatError.limitReached(let setting, let limit, _) = error else { return false }
            return setting == "maxSubscriptions" && limit == 3
        }
        #expect(feed.subscriptionStats.count == 3, "the refused subscription left nothing behind")
        try feed.unsubscribe(first.subscription)
        _ = try feed.subscribe(limit: 5, maxInFlight: 1)
    }

    /// Random streams against never-acking windows: the pending entries never exceed the bound;
    /// after the ack, the reset (or batches) bring every mirror to the list, through the UIKit model.
    @Test(arguments: [(UInt64(21), 3, 10), (22, 10, 10), (23, 1, 40), (24, 25, 30)])
    func aWindowThatFallsBehindGetsAResetInsteadOfTrackingEveryChat(seed: UInt64, limit: Int, maxPending: Int) throws {
        var generator = SeededGenerator(seed: seed)
        var stream = ChatStream()
        var initial: [ChatChange] = []
        for _ in 0..<60 { initial.append(stream.nextChange(using: &generator)) }
        let feed = LiveFeed(chats: stream.list, options: FeedOptions(resetThreshold: 4, maxPendingChats: maxPending))
        let bound = max(maxPending, 2 * limit)
        let window = try feed.subscribe(limit: limit, maxInFlight: 1)
        let whole = try feed.subscribe(limit: nil, maxInFlight: 1)
        var mirrors = [
            window.subscription: Mirror(subscription: window.subscription, rows: window.items),
            whole.subscription: Mirror(subscription: whole.subscription, rows: whole.items),
        ]
        var resets = 0
        for round in 0..<30 {
            // Many changes while the subscribers wait.
            for _ in 0..<(round % 3 == 0 ? 200 : 5) {
                for notification in feed.apply(stream.nextGroup(maxChanges: 4, using: &generator)) {
                    try mirrors[notification.subscription]!.receive(notification)
                    if case .reset = notification, notification.subscription == window.subscription { resets += 1 }
                }
                let stats = feed.subscriptionStats.first { $0.subscription == window.subscription }!
                #expect(stats.pendingChats <= bound, "a waiting window tracks at most \(bound) chats")
            }
            for id in [window.subscription, whole.subscription] {
                for notification in try feed.acknowledge(id, seq: mirrors[id]!.lastSeq) {
                    try mirrors[notification.subscription]!.receive(notification)
                    if case .reset = notification, notification.subscription == window.subscription { resets += 1 }
                }
            }
        }
        // Quiesce and compare.
        var acked = true
        while acked {
            acked = false
            for id in [window.subscription, whole.subscription] {
                for notification in try feed.acknowledge(id, seq: mirrors[id]!.lastSeq) {
                    try mirrors[notification.subscription]!.receive(notification)
                    acked = true
                }
            }
        }
        #expect(mirrors[window.subscription]!.rows == Array(stream.list.prefix(limit)))
        #expect(mirrors[whole.subscription]!.rows == stream.list)
        #expect(resets > 0, "200 changes while waiting outgrow the bound")
        #expect(feed.subscriptionStats.allSatisfy { !$0.resetPending })
    }

    /// A subscriber that acks at once is never reset by the bound, however large a group is.
    @Test func aPromptSubscriberIsNotResetByALargeGroup() throws {
        var generator = SeededGenerator(seed: 25)
        var stream = ChatStream()
        for _ in 0..<300 { _ = stream.nextChange(using: &generator) }
        let feed = LiveFeed(chats: stream.list, options: FeedOptions(resetThreshold: 1000, maxPendingChats: 10))
        let window = try feed.subscribe(limit: 3, maxInFlight: 0)
        var mirror = Mirror(subscription: window.subscription, rows: window.items)
        for _ in 0..<20 {
            for notification in feed.apply((0..<100).map { _ in stream.nextChange(using: &generator) }) {
                if case .reset = notification { Issue.record("a reset for a subscriber that needs no acks") }
                try mirror.receive(notification)
            }
        }
        #expect(mirror.rows == Array(stream.list.prefix(3)))
    }
}
