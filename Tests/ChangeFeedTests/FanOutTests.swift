import ChangeFeed
import ChatModel
import ListDiff
import Testing
import TestSupport

/// A change visits only the subscriptions of the lists it touches: subscriptions of both lists
/// come and go at random while random changes pass, and every mirror still follows its list.
@Suite("Fan-out by list")
struct FanOutTests {
    @Test(arguments: [UInt64(71), 72, 73])
    func subscriptionsThatComeAndGoFollowTheirLists(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var stream = ChatStream()
        for _ in 0..<60 { _ = stream.nextChange(using: &generator) }
        let feed = LiveFeed(chats: stream.chats.values.sorted { $0.id < $1.id }, options: FeedOptions(maxPendingChats: 3))
        var mirrors: [(view: ChatListView, limit: Int?, mirror: Mirror)] = []
        func subscribe() throws {
            let view = ChatListView.all.randomElement(using: &generator)!
            let limit = [nil, 2, 6].randomElement(using: &generator)!
            let snapshot = try feed.subscribe(view: view, limit: limit, maxInFlight: Int.random(in: 0...2, using: &generator))
            #expect(snapshot.items == Array(stream.list(view).prefix(limit ?? .max)))
            mirrors.append((view, limit, Mirror(subscription: snapshot.subscription, rows: snapshot.items)))
        }
        func deliver(_ notifications: [FeedNotification]) throws {
            for notification in notifications {
                let position = try #require(mirrors.firstIndex { $0.mirror.subscription == notification.subscription })
                try mirrors[position].mirror.receive(notification)
            }
        }
        for _ in 0..<8 { try subscribe() }
        for step in 0..<600 {
            try deliver(feed.apply(stream.nextGroup(maxChanges: 3, using: &generator)))
            if step % 25 == 0, !mirrors.isEmpty {
                let gone = mirrors.remove(at: Int.random(in: 0..<mirrors.count, using: &generator))
                try feed.unsubscribe(gone.mirror.subscription)
                try subscribe()
            }
            for position in mirrors.indices where Int.random(in: 0..<4, using: &generator) == 0 && mirrors[position].mirror.lastSeq > 0 {
                try deliver(try feed.acknowledge(mirrors[position].mirror.subscription, seq: mirrors[position].mirror.lastSeq))
            }
        }
        try quiesce(feed, lastSeqs: { mirrors.map { ($0.mirror.subscription, $0.mirror.lastSeq) } }, deliver: deliver)
        #expect(feed.subscriptionStats.map(\.subscription) == mirrors.map(\.mirror.subscription))
        for entry in mirrors {
            #expect(entry.mirror.rows == Array(stream.list(entry.view).prefix(entry.limit ?? .max)),
                    "\(entry.view) limit \(entry.limit.map(String.init) ?? "all")")
        }
    }
}
