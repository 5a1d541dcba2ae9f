import ChangeFeed
import ChatModel
import ListDiff
import Testing
import TestSupport

@Suite("The reset rule")
struct ResetRuleTests {
    static func chat(_ number: Int, date: Int64? = nil) -> Chat {
        Chat(id: "c\(number)", title: "chat \(number)", createdAt: 0, lastMessage: nil,
             lastMessageDate: date ?? Int64(1_000_000 - number), unread: 0, revision: 1)
    }

    @Test("sizes are estimated from counts")
    func estimates() {
        let chat = Self.chat(1)
        let batch = Batch<Chat>(
            deletes: [9, 4], inserts: [IndexedItem(index: 0, item: chat)], moves: [Move(from: 3, to: 1)])
        #expect(ResetRule.estimatedBytes(of: batch) == 128 + 200 + 2 * 8 + 24)
        #expect(ResetRule.estimatedBytes(of: Batch<Chat>(updates: [IndexedItem(index: 2, item: chat)])) == 128 + 200)
        #expect(ResetRule.estimatedResetBytes(rows: 10) == 128 + 10 * 200)
        #expect(FeedOptions().resetThreshold == 1.5)
    }

    /// A window of n rows whose every row is replaced (n deletes and n inserts) and a window whose
    /// every row moved and changed (moves plus a deferred update per row) both stay batches with
    /// the default threshold: a window's batch carries at most one chat per row.
    @Test("a window's batch never resets with the default threshold", arguments: [1, 3, 10, 50])
    func windowWorstCase(rows: Int) {
        let rule = FeedOptions().resetRule
        let chats = (0..<rows).map { IndexedItem(index: $0, item: Self.chat($0)) }
        let replaced = Batch<Chat>(deletes: Array((0..<rows).reversed()), inserts: chats)
        #expect(!rule.prefersReset(over: [replaced], rows: rows))
        let moved = Batch<Chat>(moves: (0..<rows).map { Move(from: $0, to: rows - 1 - $0) })
        #expect(!rule.prefersReset(over: [moved, Batch<Chat>(updates: chats)], rows: rows))
        // A threshold of 0 resets on any batch.
        #expect(ResetRule(threshold: 0).prefersReset(over: [moved], rows: rows))
    }

    /// Removing 990 of 1,000 chats is 990 deletes, larger than 1.5 × a reset of the 10 left; removing
    /// 100 is not.
    @Test("a mass delete of a long list is a reset; a smaller one is a batch", arguments: [(990, true), (100, false)])
    func massDelete(removed: Int, expectReset: Bool) throws {
        let chats = (0..<1_000).map { Self.chat($0) }
        let feed = LiveFeed(chats: chats)
        let snapshot = try feed.subscribe(limit: nil, maxInFlight: 0)
        var mirror = Mirror(subscription: snapshot.subscription, rows: snapshot.items)
        let sent = feed.apply((0..<removed).map { ChatChange(chatID: "c\($0 * 1_000 / removed)", chat: nil) })
        #expect(sent.count == 1)
        for notification in sent { try mirror.receive(notification) }
        if case .reset = sent[0] { #expect(expectReset) } else { #expect(!expectReset) }
        #expect(mirror.rows.count == 1_000 - removed)
    }

    /// Benchmarks/README.md: in a fast random stream with late acks, at most 5% of a top-10 window's
    /// notifications are resets. Groups of 1–4 changes arrive every round; the subscriber
    /// (`maxInFlight` 1) acks in one round out of `ackEvery` on average, so changes coalesce into
    /// large batches. Every notification goes through the UIKit model. The shares are the
    /// README's figures.
    @Test("resets are at most 5% of a top-10 window's notifications",
          arguments: [3 as Int?, 10, nil], [4, 20])
    func resetShare(limit: Int?, ackEvery: Int) throws {
        var generator = SeededGenerator(seed: 2026)
        var stream = ChatStream()
        for _ in 0..<300 { _ = stream.nextChange(using: &generator) }
        let feed = LiveFeed(chats: stream.list)
        let snapshot = try feed.subscribe(limit: limit, maxInFlight: 1)
        var mirror = Mirror(subscription: snapshot.subscription, rows: snapshot.items)
        var notifications = 0
        var resets = 0
        // For comparison: batches that 0.1.0's rule (operations > rows) would have replaced by a
        // reset on their own, without counting their deferred batch (so a lower bound).
        var oldRuleResets = 0
        func receive(_ sent: [FeedNotification]) throws {
            for notification in sent {
                try mirror.receive(notification)
                notifications += 1
                switch notification {
                case .reset: resets += 1
                case .batch(_, _, let counts, let batch): if batch.operationCount > counts.count { oldRuleResets += 1 }
                }
            }
        }
        for _ in 0..<5_000 {
            try receive(feed.apply(stream.nextGroup(maxChanges: 4, using: &generator)))
            if Int.random(in: 0..<ackEvery, using: &generator) == 0 {
                try receive(try feed.acknowledge(mirror.subscription, seq: mirror.lastSeq))
            }
        }
        let share = Double(resets) / Double(notifications)
        print("reset share, limit \(limit.map(String.init) ?? "none"), ack 1 round in \(ackEvery): \(resets) of \(notifications) notifications"
              + " (\((share * 1000).rounded() / 10)%); 0.1.0's rule: at least \(oldRuleResets)"
              + " (\((Double(oldRuleResets) / Double(notifications) * 1000).rounded() / 10)%); \(stream.chats.count) chats at the end")
        #expect(notifications > 5_000 / ackEvery / 2)
        #expect(share <= 0.05)
    }
}
