import ChangeFeed
import ChatModel
import ListDiff
import Testing
import TestSupport

extension Chat: DiffableItem {}

/// A subscriber that applies every notification to its mirror with the UIKit model.
struct Mirror {
    var subscription: String
    var rows: [Chat]
    var lastSeq = 0

    mutating func receive(_ notification: FeedNotification) throws {
        #expect(notification.seq == lastSeq + 1, "seq without gaps")
        lastSeq = notification.seq
        switch notification {
        case .batch(_, _, let counts, let batch):
            rows = try UIKitBatchModel.apply(batch, to: rows)
            #expect(rows.count == counts.count)
        case .reset(_, _, let counts, let items):
            rows = items
            #expect(items.count == counts.count)
        }
    }
}

/// Acknowledges every subscription's latest seq until nothing more comes, handing what comes to
/// `deliver`.
func quiesce(
    _ feed: LiveFeed, lastSeqs: () -> [(subscription: String, seq: Int)], deliver: ([FeedNotification]) throws -> Void
) throws {
    var quiet = false
    while !quiet {
        quiet = true
        for (subscription, seq) in lastSeqs() {
            let more = try feed.acknowledge(subscription, seq: seq)
            if !more.isEmpty { quiet = false }
            try deliver(more)
        }
    }
}

@Suite("The change feed")
struct ChangeFeedTests {
    /// Applies random groups of changes; subscribers ack at random moments. Every notification
    /// passes the UIKit model, and once every subscriber has acked all, its mirror equals the list.
    @Test("mirrors follow the list under random changes and acks", arguments: [
        (1 as UInt64, nil as Int?, 0), (2, nil, 1), (3, nil, 3), (4, 7, 0), (5, 7, 1), (6, 1, 3), (7, 25, 1),
    ])
    func randomStreams(seed: UInt64, limit: Int?, maxInFlight: Int) throws {
        var generator = SeededGenerator(seed: seed)
        var stream = ChatStream()
        var initial: [ChatChange] = []
        for _ in 0..<40 { initial.append(stream.nextChange(using: &generator)) }
        let feed = LiveFeed(chats: stream.list, options: FeedOptions(resetThreshold: 4))
        let snapshot = try feed.subscribe(limit: limit, maxInFlight: maxInFlight)
        #expect(snapshot.items == Array(stream.list.prefix(limit ?? .max)))
        var mirror = Mirror(subscription: snapshot.subscription, rows: snapshot.items)

        for _ in 0..<400 {
            for notification in feed.apply(stream.nextGroup(maxChanges: 4, using: &generator)) {
                try mirror.receive(notification)
            }
            if Int.random(in: 0..<3, using: &generator) == 0, mirror.lastSeq > 0 {
                for notification in try feed.acknowledge(mirror.subscription, seq: mirror.lastSeq) {
                    try mirror.receive(notification)
                }
            }
            if maxInFlight == 0 {
                #expect(mirror.rows == Array(stream.list.prefix(limit ?? .max)))
            }
        }
        // Quiesce: ack until nothing more comes.
        while true {
            let more = try feed.acknowledge(mirror.subscription, seq: mirror.lastSeq)
            if more.isEmpty { break }
            for notification in more { try mirror.receive(notification) }
        }
        #expect(mirror.rows == Array(stream.list.prefix(limit ?? .max)))
    }

    /// With no acks needed, each group gives a structural batch and its deferred batch; only chats
    /// whose order key changed move, and the rows that stay are the rule's optimum.
    @Test("moves are only of changed keys and at the optimum", arguments: [
        (11 as UInt64, nil as Int?, 5), (12, 10, 5), (13, 3, 5), (14, nil, 1), (15, 10, 1), (16, 3, 1),
    ])
    func optimalMoves(seed: UInt64, limit: Int?, maxChanges: Int) throws {
        var generator = SeededGenerator(seed: seed)
        var stream = ChatStream()
        for _ in 0..<50 { _ = stream.nextChange(using: &generator) }
        let feed = LiveFeed(chats: stream.list, options: FeedOptions(resetThreshold: .infinity))
        let snapshot = try feed.subscribe(limit: limit, maxInFlight: 0)
        var old = snapshot.items
        for _ in 0..<300 {
            let notifications = feed.apply(stream.nextGroup(maxChanges: maxChanges, using: &generator))
            let new = Array(stream.list.prefix(limit ?? .max))
            var batches: [Batch<Chat>] = []
            // Empty batches only carry new counts (a change in the archive, for one).
            for case .batch(_, _, _, let batch) in notifications where !batch.isEmpty { batches.append(batch) }
            let structural = batches.first { $0.isStructural }
            let updates = batches.first { !$0.isStructural }
            #expect(batches.count <= notifications.count && batches.count <= 2)
            let result = ListDiffResult(structural: structural, updates: updates)
            try #require(ReferenceDiff.problem(with: result, old: old, new: new) == nil)
            let oldKeys = Dictionary(uniqueKeysWithValues: old.map { ($0.id, $0.orderKey) })
            let changed = Set(new.filter { chat in oldKeys[chat.id].map { $0 != chat.orderKey } ?? false }.map(\.id))
            let moved = Set((structural?.moves ?? []).map { old[$0.from].id })
            #expect(moved.isSubset(of: changed))
            #expect(ReferenceDiff.stayWeight(of: result, old: old, new: new)
                == ReferenceDiff.optimalWeight(old: old, new: new, mayMove: changed))
            old = new
        }
    }

    @Test("a subscriber that never acks costs one entry per distinct chat changed")
    func boundedBacklog() throws {
        var generator = SeededGenerator(seed: 31)
        var stream = ChatStream(withLists: false)
        for _ in 0..<30 { _ = stream.nextChange(using: &generator) }
        let feed = LiveFeed(chats: stream.list)
        let snapshot = try feed.subscribe(limit: nil, maxInFlight: 1)
        let first = feed.apply([stream.nextChange(using: &generator)])
        #expect(first.count == 1)
        var touched = Set<String>()
        for _ in 0..<5_000 {
            let change = stream.nextChange(using: &generator)
            touched.insert(change.chatID)
            #expect(feed.apply([change]).isEmpty)
        }
        let stats = try #require(feed.subscriptionStats.first)
        #expect(stats.subscription == snapshot.subscription)
        #expect(stats.pendingChats <= touched.count)
        #expect(stats.lastSentSeq == 1)
    }

    @Test("a deferred batch comes before any later structural batch")
    func deferredFirst() throws {
        let chats = (0..<5).map { Chat(id: "c\($0)", title: "t", createdAt: Int64(100 - $0), lastMessage: nil,
                                        lastMessageDate: Int64(100 - $0), unread: 0, revision: 1) }
        let feed = LiveFeed(chats: chats, options: FeedOptions(resetThreshold: .infinity))
        let snapshot = try feed.subscribe(limit: nil, maxInFlight: 1)
        var bumped = chats[4]
        bumped.lastMessageDate = 200
        bumped.revision = 2
        let sent = feed.apply([ChatChange(chatID: "c4", chat: bumped)])
        #expect(sent.count == 1)
        guard case .batch(_, 1, let counts, let structural) = sent[0] else { Issue.record("\(sent)"); return }
        #expect(counts.count == 5 && counts.total == 5)
        #expect(structural.moves == [Move(from: 4, to: 0)])
        var again = chats[2]
        again.lastMessageDate = 300
        again.revision = 2
        #expect(feed.apply([ChatChange(chatID: "c2", chat: again)]).isEmpty)
        let next = try feed.acknowledge(snapshot.subscription, seq: 1)
        guard case .batch(_, 2, _, let deferred) = next.first else { Issue.record("\(next)"); return }
        #expect(deferred.updates.map(\.index) == [0] && deferred.updates[0].item == bumped)
        let last = try feed.acknowledge(snapshot.subscription, seq: 2)
        guard case .batch(_, 3, _, let moveOfC2) = last.first else { Issue.record("\(last)"); return }
        #expect(moveOfC2.moves == [Move(from: 3, to: 0)])
    }

    @Test("a backlog larger on the wire than the snapshot is sent as a reset")
    func reset() throws {
        var generator = SeededGenerator(seed: 41)
        var stream = ChatStream()
        for _ in 0..<20 { _ = stream.nextChange(using: &generator) }
        let feed = LiveFeed(chats: stream.list, options: FeedOptions(resetThreshold: 0.5))
        let snapshot = try feed.subscribe(limit: 5, maxInFlight: 1)
        _ = feed.apply([stream.nextChange(using: &generator)])
        for _ in 0..<200 { _ = feed.apply([stream.nextChange(using: &generator)]) }
        let sent = try feed.acknowledge(snapshot.subscription, seq: 1)
        guard case .reset(_, 2, let counts, let items) = sent.first else { Issue.record("\(sent)"); return }
        #expect(items == Array(stream.list.prefix(5)) && counts.count == items.count && counts.total == stream.list.count)
    }

    @Test("acks of unsent seqs and unknown subscriptions are errors")
    func ackErrors() throws {
        let feed = LiveFeed(chats: [])
        let snapshot = try feed.subscribe(limit: nil, maxInFlight: nil)
        #expect(throws: ChatError.self) { _ = try feed.acknowledge(snapshot.subscription, seq: 1) }
        #expect(throws: ChatError.notFound(kind: "subscription", id: "nope")) { _ = try feed.acknowledge("nope", seq: 0) }
        try feed.unsubscribe(snapshot.subscription)
        #expect(throws: ChatError.self) { try feed.unsubscribe(snapshot.subscription) }
        #expect(throws: ChatError.invalidParams(field: "limit", reason: "must be at least 1")) {
            _ = try feed.subscribe(limit: 0, maxInFlight: nil)
        }
    }
}

@Suite("Fewest moves, then upward, in the feed")
struct FeedPreferenceTests {
    static func chat(_ id: String, _ date: Int64, revision: Int64 = 1) -> Chat {
        Chat(id: id, title: id, createdAt: 0, lastMessage: nil, lastMessageDate: date, unread: 0, revision: revision)
    }

    /// [a, x1, x2, y] → [x1, x2, a, y] with a, x1 and x2 all changed: one move of a (down) is
    /// fewer than two moves of x1 and x2 (up).
    @Test("the fewest changed chats move, even when the one that moves went down")
    func fewestMovesFirst() throws {
        let feed = LiveFeed(chats: [Self.chat("a", 40), Self.chat("x1", 30), Self.chat("x2", 20), Self.chat("y", 10)],
                              options: FeedOptions(resetThreshold: .infinity))
        _ = try feed.subscribe(limit: nil, maxInFlight: 0)
        let sent = feed.apply([
            ChatChange(chatID: "a", chat: Self.chat("a", 35, revision: 2)),
            ChatChange(chatID: "x1", chat: Self.chat("x1", 50, revision: 2)),
            ChatChange(chatID: "x2", chat: Self.chat("x2", 45, revision: 2)),
        ])
        guard case .batch(_, 1, _, let structural) = sent.first else { Issue.record("\(sent)"); return }
        #expect(structural.moves == [Move(from: 0, to: 2)])
    }

    /// [a, b, y] → [b, a, y] with a and b both changed: one move either way; b went up, so b moves.
    @Test("between equally few moves, the changed chat that went up moves")
    func upwardOnTies() throws {
        let feed = LiveFeed(chats: [Self.chat("a", 40), Self.chat("b", 30), Self.chat("y", 10)],
                              options: FeedOptions(resetThreshold: .infinity))
        _ = try feed.subscribe(limit: nil, maxInFlight: 0)
        let sent = feed.apply([
            ChatChange(chatID: "a", chat: Self.chat("a", 20, revision: 2)),
            ChatChange(chatID: "b", chat: Self.chat("b", 25, revision: 2)),
        ])
        guard case .batch(_, 1, _, let structural) = sent.first else { Issue.record("\(sent)"); return }
        #expect(structural.moves == [Move(from: 1, to: 0)])
    }
}

@Suite("Chat lists in the feed")
struct ChatListFeedTests {
    /// Subscriptions on both lists, whole, windowed and unread-only, all at once, under random
    /// changes with pins, archiving and mute: every notification passes the UIKit model and carries
    /// counts equal to a recount; once acked, each mirror equals its view. Groups of one change
    /// with no acks needed take the single-chat path of every batch.
    @Test("every view's mirror follows it, with counts equal to a recount", arguments: [
        (21 as UInt64, 0, 4), (22, 1, 4), (23, 2, 4), (24, 0, 4), (25, 1, 4), (26, 0, 1), (27, 0, 1), (28, 1, 1),
    ])
    func views(seed: UInt64, maxInFlight: Int, maxChanges: Int) throws {
        var generator = SeededGenerator(seed: seed)
        var stream = ChatStream()
        for _ in 0..<60 { _ = stream.nextChange(using: &generator) }
        let feed = LiveFeed(chats: stream.chats.values.shuffled(using: &generator), options: FeedOptions(resetThreshold: 4))
        var mirrors: [(view: ChatListView, limit: Int?, mirror: Mirror, counts: FeedCounts)] = []
        for view in ChatListView.all {
            for limit in [nil, 3, 8] as [Int?] {
                let snapshot = try feed.subscribe(view: view, limit: limit, maxInFlight: maxInFlight)
                #expect(snapshot.items == Array(stream.list(view).prefix(limit ?? .max)))
                let recount = ListCounters.recount(stream.chats.values, list: view.list)
                #expect(snapshot.counts == FeedCounts(count: snapshot.items.count, total: recount.total, unread: recount.unread))
                mirrors.append((view, limit, Mirror(subscription: snapshot.subscription, rows: snapshot.items), snapshot.counts))
            }
        }
        func deliver(_ notifications: [FeedNotification]) throws {
            for notification in notifications {
                let position = mirrors.firstIndex { $0.mirror.subscription == notification.subscription }!
                try mirrors[position].mirror.receive(notification)
                mirrors[position].counts = notification.counts
            }
        }
        for _ in 0..<300 {
            try deliver(feed.apply(stream.nextGroup(maxChanges: maxChanges, using: &generator)))
            for position in mirrors.indices where Int.random(in: 0..<3, using: &generator) == 0 && mirrors[position].mirror.lastSeq > 0 {
                let mirror = mirrors[position].mirror
                try deliver(try feed.acknowledge(mirror.subscription, seq: mirror.lastSeq))
            }
            for view in ChatListView.all {
                #expect(feed.index.counters(of: view.list) == ListCounters.recount(stream.chats.values, list: view.list))
                #expect(feed.index.chats(from: 0, count: 1000, in: view) == stream.list(view))
            }
        }
        try quiesce(feed, lastSeqs: { mirrors.map { ($0.mirror.subscription, $0.mirror.lastSeq) } }, deliver: deliver)
        for entry in mirrors {
            let expected = Array(stream.list(entry.view).prefix(entry.limit ?? .max))
            #expect(entry.mirror.rows == expected, "\(entry.view) limit \(entry.limit.map(String.init) ?? "all")")
            let recount = ListCounters.recount(stream.chats.values, list: entry.view.list)
            if entry.mirror.lastSeq > 0 {
                #expect(entry.counts == FeedCounts(count: expected.count, total: recount.total, unread: recount.unread))
            }
        }
    }

    static func chat(_ id: String, _ date: Int64, list: ChatList = .main, unread: Int64 = 0, muted: Bool = false,
                     pin: Int64 = 0, revision: Int64 = 1) -> Chat {
        Chat(id: id, title: id, createdAt: 0, lastMessage: nil, lastMessageDate: date, unread: unread,
             revision: revision, list: list, pinOrder: pin, muted: muted)
    }

    @Test("a change outside the window or the view sends an empty batch with the new counts")
    func countsOnly() throws {
        let feed = LiveFeed(chats: [Self.chat("a", 30), Self.chat("b", 20), Self.chat("z", 10, list: .archive)],
                              options: FeedOptions(resetThreshold: .infinity))
        let snapshot = try feed.subscribe(limit: 1, maxInFlight: 0)
        #expect(snapshot.counts == FeedCounts(count: 1, total: 2, unread: UnreadCounters()))
        let sent = feed.apply([ChatChange(chatID: "b", chat: Self.chat("b", 20, unread: 2, muted: true, revision: 2))])
        guard case .batch(_, 1, let counts, let batch) = sent.first, sent.count == 1 else { Issue.record("\(sent)"); return }
        #expect(batch.isEmpty)
        #expect(counts == FeedCounts(count: 1, total: 2, unread: UnreadCounters(chats: 1, messages: 2)))
        // A change in the other list changes nothing here.
        #expect(feed.apply([ChatChange(chatID: "z", chat: Self.chat("z", 10, list: .archive, unread: 1, revision: 2))]).isEmpty)
        // Archiving a chat: a delete here, the total drops.
        let archived = feed.apply([ChatChange(chatID: "a", chat: Self.chat("a", 30, list: .archive, revision: 2))])
        guard case .batch(_, 2, let after, let delete) = archived.first else { Issue.record("\(archived)"); return }
        #expect(delete.deletes == [0] && delete.inserts.map(\.item.id) == ["b"])
        #expect(after.total == 1 && after.count == 1)
    }

    @Test("pinning moves a chat up; reordering the pins costs the fewest moves")
    func pins() throws {
        let chats = [Self.chat("p1", 1, pin: 3), Self.chat("p2", 2, pin: 2), Self.chat("p3", 3, pin: 1),
                     Self.chat("a", 50), Self.chat("b", 40)]
        let feed = LiveFeed(chats: chats, options: FeedOptions(resetThreshold: .infinity))
        let snapshot = try feed.subscribe(limit: nil, maxInFlight: 0)
        #expect(snapshot.items.map(\.id) == ["p1", "p2", "p3", "a", "b"])
        // setPinned [p3, p1, p2]: one move of p3 up.
        let sent = feed.apply([
            ChatChange(chatID: "p3", chat: Self.chat("p3", 3, pin: 3, revision: 2)),
            ChatChange(chatID: "p1", chat: Self.chat("p1", 1, pin: 2, revision: 2)),
            ChatChange(chatID: "p2", chat: Self.chat("p2", 2, pin: 1, revision: 2)),
        ])
        guard case .batch(_, 1, _, let structural) = sent.first else { Issue.record("\(sent)"); return }
        #expect(structural.moves == [Move(from: 2, to: 0)])
        // Pinning b puts it on top.
        let pinned = feed.apply([ChatChange(chatID: "b", chat: Self.chat("b", 40, pin: 4, revision: 2))])
        guard case .batch(_, 3, _, let up) = pinned.first else { Issue.record("\(pinned)"); return }
        #expect(up.moves == [Move(from: 4, to: 0)])
    }
}
