import ChangeFeed
import ChatModel
import ListDiff
import Testing
import TestSupport

/// Subscribers are bounded: a cap on subscriptions, and a waiting subscription tracks at most
/// `maxPendingChats` changed chats (fewer for few rows), then keeps only the rows it shows and
/// computes its next batch from them: never a reset for a burst.
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

    /// A feed finds a subscription by a scan while it has few and by a table beyond that
    /// (`positionByID`): subscriptions added and ended at random across that line are each found,
    /// in the right place, and an ended one is not found.
    @Test func subscriptionsAreFoundAcrossTheScanLimit() throws {
        var generator = SeededGenerator(seed: 8)
        let feed = LiveFeed(chats: [], options: FeedOptions())
        var open: [String] = []
        var ended: [String] = []
        var most = 0
        for step in 0..<400 {
            // Up to 20 and back down to none, twice: across the scan limit both ways.
            let growing = (step / 100) % 2 == 0
            if open.isEmpty || (open.count < 20 && Double.random(in: 0..<1, using: &generator) < (growing ? 0.8 : 0.2)) {
                open.append(try feed.subscribe(limit: step % 3 == 0 ? nil : 5, maxInFlight: 1).subscription)
            } else {
                let id = open.remove(at: Int.random(in: 0..<open.count, using: &generator))
                try feed.unsubscribe(id)
                ended.append(id)
            }
            most = max(most, open.count)
            #expect(feed.subscriptionStats.map(\.subscription) == open, "step \(step)")
            for id in open { #expect(try feed.acknowledge(id, seq: 0).isEmpty) }
            if let id = ended.last {
                #expect(throws: ChatError.self) { try feed.acknowledge(id, seq: 0) }
                #expect(throws: ChatError.self) { try feed.unsubscribe(id) }
            }
        }
        #expect(most > 12)
    }

    /// Random streams against subscriptions that wait a long time: what waits never exceeds the
    /// bound, a window is never reset (its batch is never larger than its rows), and after the
    /// acks the batches bring every mirror to the list, through the UIKit model.
    @Test(arguments: [(UInt64(21), 3, 10), (22, 10, 10), (23, 1, 40), (24, 25, 30), (26, 50, 1_000)])
    func aWindowThatFallsBehindIsNeverReset(seed: UInt64, limit: Int, maxPending: Int) throws {
        var generator = SeededGenerator(seed: seed)
        var stream = ChatStream()
        for _ in 0..<60 { _ = stream.nextChange(using: &generator) }
        let feed = LiveFeed(chats: stream.list, options: FeedOptions(maxPendingChats: maxPending))
        let window = try feed.subscribe(limit: limit, maxInFlight: 1)
        let whole = try feed.subscribe(limit: nil, maxInFlight: 1)
        var mirrors = [
            window.subscription: Mirror(subscription: window.subscription, rows: window.items),
            whole.subscription: Mirror(subscription: whole.subscription, rows: whole.items),
        ]
        var windowNotifications = 0
        var keptShownRows = false
        func deliver(_ notifications: [FeedNotification]) throws {
            for notification in notifications {
                try mirrors[notification.subscription]!.receive(notification)
                guard notification.subscription == window.subscription else { continue }
                windowNotifications += 1
                if case .reset = notification { Issue.record("a reset of the window (seed \(seed))") }
            }
        }
        for round in 0..<30 {
            // Many changes while the subscribers wait: thousands in all.
            for _ in 0..<(round % 3 == 0 ? 400 : 5) {
                try deliver(feed.apply(stream.nextGroup(maxChanges: 4, using: &generator)))
                for stats in feed.subscriptionStats {
                    #expect(stats.pendingChats <= max(maxPending, 1), "a waiting subscription tracks at most \(maxPending) chats")
                    if stats.shownRows > 0 { keptShownRows = true }
                }
            }
            for id in [window.subscription, whole.subscription] {
                try deliver(try feed.acknowledge(id, seq: mirrors[id]!.lastSeq))
            }
        }
        // Quiesce and compare.
        var acked = true
        while acked {
            acked = false
            for id in [window.subscription, whole.subscription] {
                let more = try feed.acknowledge(id, seq: mirrors[id]!.lastSeq)
                acked = acked || !more.isEmpty
                try deliver(more)
            }
        }
        #expect(mirrors[window.subscription]!.rows == Array(stream.list.prefix(limit)))
        #expect(mirrors[whole.subscription]!.rows == stream.list)
        #expect(windowNotifications > 30)
        #expect(keptShownRows, "400 changes while waiting outgrow the bound (at most max(64, rows ÷ 32) for 60 rows)")
        #expect(feed.subscriptionStats.allSatisfy { !$0.resetPending && $0.shownRows == 0 })
    }

    /// Subscriptions of every view and window that wait, with a bound small enough that they keep
    /// their shown rows: every batch passes the UIKit model, only chats whose order key changed
    /// move, at the optimum of docs/PROTOCOL.md, Applying a batch, no window is reset, and every mirror ends at its list.
    @Test(arguments: [(UInt64(41), 1, 2), (42, 2, 5), (43, 1, 1), (44, 3, 12)])
    func waitingSubscriptionsComputeTheirBatchFromTheRowsTheyShow(seed: UInt64, maxInFlight: Int, maxPending: Int) throws {
        var generator = SeededGenerator(seed: seed)
        var stream = ChatStream()
        for _ in 0..<80 { _ = stream.nextChange(using: &generator) }
        let feed = LiveFeed(
            chats: stream.chats.values.sorted { $0.id < $1.id }.shuffled(using: &generator),
            options: FeedOptions(resetThreshold: .infinity, maxPendingChats: maxPending))
        var mirrors: [(view: ChatListView, limit: Int?, mirror: Mirror)] = []
        for view in ChatListView.all {
            for limit in [nil, 1, 4, 9] as [Int?] {
                let snapshot = try feed.subscribe(view: view, limit: limit, maxInFlight: maxInFlight)
                mirrors.append((view, limit, Mirror(subscription: snapshot.subscription, rows: snapshot.items)))
            }
        }
        var shownBatches = 0
        func deliver(_ notifications: [FeedNotification], shown: Set<String>) throws {
            for notification in notifications {
                let position = mirrors.firstIndex { $0.mirror.subscription == notification.subscription }!
                let (view, limit, mirror) = mirrors[position]
                if case .batch(_, _, _, let batch) = notification, batch.isStructural {
                    // A structural batch leads to the list as it is now (a deferred batch, sent
                    // first, is never structural).
                    let old = mirror.rows
                    let new = feed.index.chats(from: 0, count: limit ?? 10_000, in: view)
                    let oldKeys = Dictionary(uniqueKeysWithValues: old.map { ($0.id, $0.orderKey) })
                    let changed = Set(new.filter { chat in oldKeys[chat.id].map { $0 != chat.orderKey } ?? false }.map(\.id))
                    let moved = Set(batch.moves.map { old[$0.from].id })
                    #expect(moved.isSubset(of: changed), "only chats whose order key changed move")
                    let result = ListDiffResult(structural: batch, updates: nil)
                    #expect(ReferenceDiff.stayWeight(of: result, old: old, new: new)
                        == ReferenceDiff.optimalWeight(old: old, new: new, mayMove: changed))
                    if shown.contains(notification.subscription) { shownBatches += 1 }
                }
                if case .reset = notification { Issue.record("a reset of \(view) limit \(String(describing: limit))") }
                try mirrors[position].mirror.receive(notification)
            }
        }
        for round in 0..<200 {
            try deliver(feed.apply(stream.nextGroup(maxChanges: 4, using: &generator)), shown: [])
            guard round % 7 == 0 else { continue }
            let shown = Set(feed.subscriptionStats.filter { $0.shownRows > 0 }.map(\.subscription))
            for position in mirrors.indices where Int.random(in: 0..<3, using: &generator) == 0 {
                let mirror = mirrors[position].mirror
                try deliver(try feed.acknowledge(mirror.subscription, seq: mirror.lastSeq), shown: shown)
            }
        }
        try quiesce(feed, lastSeqs: { mirrors.map { ($0.mirror.subscription, $0.mirror.lastSeq) } }) { try deliver($0, shown: []) }
        for entry in mirrors {
            #expect(entry.mirror.rows == Array(stream.list(entry.view).prefix(entry.limit ?? .max)),
                    "\(entry.view) limit \(entry.limit.map(String.init) ?? "all")")
        }
        #expect(shownBatches > 20, "the subscriptions kept their shown rows and sent batches from them")
    }

    /// Full-list subscriptions that never ack, at a size where a pending entry per changed chat
    /// would dominate: each keeps its shown rows, and the rows are made once for all of them.
    @Test func waitingFullListsCostTheirRowsNotTheChangedChats() throws {
        var generator = SeededGenerator(seed: 45)
        let chats = (0..<2_000).map { n in
            Chat(id: "c\(n)", title: "chat \(n)", createdAt: Int64(n), lastMessage: nil, lastMessageDate: Int64(n), unread: 0, revision: 1)
        }
        var current = Dictionary(uniqueKeysWithValues: chats.map { ($0.id, $0) })
        let feed = LiveFeed(chats: chats.reversed(), options: FeedOptions(maxSubscriptions: 64))
        var mirrors = try (0..<64).map { _ in
            let snapshot = try feed.subscribe(limit: nil, maxInFlight: 1)
            return Mirror(subscription: snapshot.subscription, rows: snapshot.items)
        }
        var clock: Int64 = 10_000
        for _ in 0..<3_000 {
            clock += 1
            var chat = current["c\(Int.random(in: 0..<2_000, using: &generator))"]!
            chat.lastMessageDate = clock
            chat.unread += 1
            chat.revision += 1
            current[chat.id] = chat
            for notification in feed.apply([ChatChange(chatID: chat.id, chat: chat)]) {
                try mirrors[mirrors.firstIndex { $0.subscription == notification.subscription }!].receive(notification)
            }
        }
        let stats = feed.subscriptionStats
        // 2,000 rows: at most max(64, 2,000 / 32) = 64 tracked chats, then the rows.
        #expect(stats.allSatisfy { $0.pendingChats == 0 && $0.shownRows == 2_000 && $0.lastSentSeq == 1 })
        let expected = current.values.sorted { $0.orderKey < $1.orderKey }
        for position in mirrors.indices {
            // The first change's deferred batch, then the structural batch from the shown rows and
            // its deferred batch.
            var more = try feed.acknowledge(mirrors[position].subscription, seq: 1)
            while !more.isEmpty {
                for notification in more { try mirrors[position].receive(notification) }
                more = try feed.acknowledge(mirrors[position].subscription, seq: mirrors[position].lastSeq)
            }
            #expect(mirrors[position].lastSeq == 4)
            #expect(mirrors[position].rows == expected)
        }
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
