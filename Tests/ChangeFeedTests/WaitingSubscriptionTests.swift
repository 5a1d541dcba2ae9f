import ChangeFeed
import ChatModel
import Testing
import TestSupport

/// `waitingSubscriptionCount` says when an ack may release a batch (the engine syncs a group on
/// its own thread when it is 0): random changes, acks, reloads and subscriptions that come and go
/// over two users' lists.
@Suite struct WaitingSubscriptionTests {
    @Test(arguments: [UInt64(81), 82, 83])
    func anAckReleasesABatchOnlyWhileASubscriptionIsCountedAsWaiting(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        let users = ["ann", "bob"]
        var streams = [ChatStream(), ChatStream()]
        for user in streams.indices { for _ in 0..<40 { _ = streams[user].nextChange(using: &generator) } }
        let feeds = UserFeeds(options: FeedOptions(maxPendingChats: 3))
        for user in users.indices {
            feeds.load(users[user], chats: streams[user].chats.values.sorted { $0.id < $1.id }, now: .now)
        }
        var lastSeq: [String: Int] = [:]
        func deliver(_ notifications: [FeedNotification]) {
            for notification in notifications { lastSeq[notification.subscription] = notification.seq }
        }
        func subscribe() throws {
            let snapshot = try feeds.subscribe(
                user: users.randomElement(using: &generator)!, view: ChatListView.all.randomElement(using: &generator)!,
                limit: [nil, 2, 6].randomElement(using: &generator)!, maxInFlight: Int.random(in: 0...2, using: &generator))
            lastSeq[snapshot.subscription] = 0
        }
        /// The count lies between the subscriptions that may not send and have changes seen to
        /// wait, and those that may not send.
        func checkCount(step: Int) {
            let stats = feeds.subscriptionStats
            let blocked = stats.filter { $0.maxInFlight > 0 && $0.lastSentSeq - $0.lastAckedSeq >= $0.maxInFlight }
            let seenWaiting = blocked.filter { $0.pendingChats > 0 || $0.deferredPending || $0.resetPending || $0.shownRows > 0 }
            #expect((seenWaiting.count...blocked.count).contains(feeds.waitingSubscriptionCount), "step \(step)")
        }
        var releases = 0
        for _ in 0..<6 { try subscribe() }
        for step in 0..<800 {
            let user = Int.random(in: 0..<2, using: &generator)
            if step % 97 == 96 {
                deliver(feeds.reload(users[user], chats: streams[user].chats.values.sorted { $0.id < $1.id }))
            } else {
                deliver(feeds.apply(streams[user].nextGroup(maxChanges: 3, using: &generator), of: users[user]))
            }
            checkCount(step: step)
            if step % 31 == 0, let gone = lastSeq.keys.sorted().randomElement(using: &generator) {
                try feeds.unsubscribe(gone, now: .now)
                lastSeq[gone] = nil
                try subscribe()
                checkCount(step: step)
            }
            for (subscription, seq) in lastSeq.sorted(by: { $0.key < $1.key }) where seq > 0 && Int.random(in: 0..<3, using: &generator) == 0 {
                let waiting = feeds.waitingSubscriptionCount
                let released = try feeds.acknowledge(subscription, seq: seq)
                if !released.isEmpty {
                    #expect(waiting > 0, "step \(step): an ack released \(released.count) notifications, none counted as waiting")
                    releases += 1
                }
                deliver(released)
                checkCount(step: step)
            }
        }
        #expect(releases > 50, "acks released batches \(releases) times: the scenario hardly waits")
        // Every subscriber acks all: nothing waits.
        var quiet = false
        while !quiet {
            quiet = true
            for (subscription, seq) in lastSeq.sorted(by: { $0.key < $1.key }) {
                let released = try feeds.acknowledge(subscription, seq: seq)
                if !released.isEmpty { quiet = false }
                deliver(released)
            }
        }
        #expect(feeds.waitingSubscriptionCount == 0)
    }

    /// A waiting subscription stops counting when it ends, or once acks let out all it waited with.
    @Test func aSubscriptionStopsWaitingWhenItEndsOrIsSentAll() throws {
        let feeds = UserFeeds(options: FeedOptions(defaultMaxInFlight: 1))
        let start = ContinuousClock.now
        func chat(_ id: String, date: Int64) -> Chat { UserFeedsTests.chat(id, date: date) }
        feeds.load("ann", chats: [chat("a", date: 2), chat("b", date: 1)], now: start)
        feeds.load("bob", chats: [chat("a", date: 2), chat("b", date: 1)], now: start)
        let ann = try feeds.subscribe(user: "ann", limit: nil, maxInFlight: nil)
        let bob = try feeds.subscribe(user: "bob", limit: nil, maxInFlight: nil)
        for (user, date) in [("ann", 3), ("ann", 4), ("bob", 3), ("bob", 4)] as [(String, Int64)] {
            _ = feeds.apply([ChatChange(chatID: "b", chat: chat("b", date: date))], of: user)
        }
        // Each sent a batch (b moved up, its content deferred) and waits with more.
        #expect(feeds.waitingSubscriptionCount == 2)
        try feeds.unsubscribe(bob.subscription, now: start)
        #expect(feeds.waitingSubscriptionCount == 1)
        #expect(try feeds.acknowledge(ann.subscription, seq: 1).count == 1)
        #expect(feeds.waitingSubscriptionCount == 1, "the deferred update went; the second change waits for its ack")
        #expect(try feeds.acknowledge(ann.subscription, seq: 2).count == 1)
        #expect(feeds.waitingSubscriptionCount == 0)
    }
}
