import ChangeFeed
import ChatModel
import Testing
import TestSupport

/// The store as a content source: the chats as they are now (the stream has recorded every
/// change it handed out), read by id; counts what it is asked.
private final class StreamContent: ChatContentSource {
    var current: [String: Chat] = [:]
    private(set) var reads = 0

    func loadContent(of chats: inout [Chat]) -> Bool {
        reads += chats.count
        for slot in chats.indices {
            let whole = current[chats[slot].id]!
            chats[slot].title = whole.title
            chats[slot].createdAt = whole.createdAt
            chats[slot].lastMessage = whole.lastMessage
        }
        return true
    }
}

/// A chat as the store loads it without its content.
private func withoutContent(_ chat: Chat) -> Chat {
    var chat = chat
    chat.title = ""
    chat.createdAt = 0
    chat.lastMessage = nil
    return chat
}

/// A feed loaded without its chats' content (`ChatContentSource`) against one loaded whole: the
/// same snapshots, resumes and notifications, byte for byte, for every view and window.
@Suite("A list loaded without content")
struct ContentlessLoadTests {
    @Test(arguments: [(UInt64(81), 0, 1000, 1.5), (82, 1, 1000, 1.5), (83, 1, 3, 1.5), (84, 2, 5, 0.3), (85, 3, 1000, 4)])
    func givesTheSameNotificationsAsAListLoadedWhole(
        seed: UInt64, maxInFlight: Int, maxPending: Int, resetThreshold: Double
    ) throws {
        var generator = SeededGenerator(seed: seed)
        var stream = ChatStream()
        for _ in 0..<120 { _ = stream.nextChange(using: &generator) }
        let content = StreamContent()
        content.current = stream.chats
        let chats = stream.chats.values.sorted { ($0.list.rawValue, $0.orderKey) < ($1.list.rawValue, $1.orderKey) }
        let options = FeedOptions(resetThreshold: resetThreshold, maxPendingChats: maxPending)
        let whole = LiveFeed(chats: chats, options: options)
        let narrow = LiveFeed(chats: chats.map(withoutContent), options: options, content: content)
        #expect(narrow.index.chats(from: 0, count: 1000) == whole.index.chats(from: 0, count: 1000))
        #expect(content.reads > 0)

        var subscriptions: [(id: String, lastSeq: Int)] = []
        func subscribeBoth(view: ChatListView, limit: Int?, known: [KnownRow]?) throws {
            let expected = try whole.subscribe(view: view, limit: limit, maxInFlight: maxInFlight, known: known)
            let snapshot = try narrow.subscribe(view: view, limit: limit, maxInFlight: maxInFlight, known: known)
            #expect(snapshot == expected, "subscribe \(view) limit \(String(describing: limit))")
            subscriptions.append((snapshot.subscription, 0))
        }
        for view in ChatListView.all {
            // Windows only, plus the whole archive: a whole list's snapshot reads (and keeps) the
            // content of every row, and the chats of `main` beyond the windows must stay without.
            for limit in view.list == .archive ? [nil, 5] : [1, 5, 12] as [Int?] {
                try subscribeBoth(view: view, limit: limit, known: nil)
            }
        }
        func deliver(_ notifications: [FeedNotification], expected: [FeedNotification]) {
            #expect(notifications == expected)
            for notification in notifications {
                let position = subscriptions.firstIndex { $0.id == notification.subscription }!
                subscriptions[position].lastSeq = notification.seq
            }
        }
        for round in 0..<300 {
            var group = stream.nextGroup(maxChanges: 5, using: &generator)
            if round % 3 == 0, let id = stream.chats.keys.sorted().randomElement(using: &generator) {
                // A change that changes nothing (same revision, same fields), most often of a chat
                // whose content the narrow index never read: no update either way.
                group.append(ChatChange(chatID: id, chat: stream.chats[id]))
            }
            content.current = stream.chats
            deliver(narrow.apply(group), expected: whole.apply(group))
            if round % 5 == 0 {
                for position in subscriptions.indices where Int.random(in: 0..<3, using: &generator) == 0 {
                    let (id, seq) = subscriptions[position]
                    deliver(try narrow.acknowledge(id, seq: seq), expected: try whole.acknowledge(id, seq: seq))
                }
            }
            if round % 50 == 0 {
                // A resume from rows the client kept (some stale, some gone), in every view.
                let view = ChatListView.all[round / 50 % ChatListView.all.count]
                let known = whole.index.chats(from: 0, count: 8, in: view).map { KnownRow(id: $0.id, revision: $0.revision - 1) }
                try subscribeBoth(view: view, limit: [3, 6][round / 50 % 2], known: known)
            }
        }
        var quiet = false
        while !quiet {
            quiet = true
            for (id, seq) in subscriptions {
                let expected = try whole.acknowledge(id, seq: seq)
                let notifications = try narrow.acknowledge(id, seq: seq)
                if !notifications.isEmpty { quiet = false }
                deliver(notifications, expected: expected)
            }
        }
        for view in ChatListView.all {
            #expect(narrow.index.chats(from: 0, count: 1000, in: view) == stream.list(view))
        }
    }

    /// A snapshot keeps the content it read: the same window again reads nothing; a change brings
    /// its chat whole.
    @Test func aSnapshotKeepsTheContentItRead() throws {
        var generator = SeededGenerator(seed: 86)
        var stream = ChatStream(withLists: false)
        for _ in 0..<60 { _ = stream.nextChange(using: &generator) }
        let content = StreamContent()
        content.current = stream.chats
        let feed = LiveFeed(chats: stream.list.map(withoutContent), content: content)
        let first = try feed.subscribe(limit: 10, maxInFlight: 0)
        #expect(first.items == Array(stream.list.prefix(10)))
        let reads = content.reads
        #expect(reads == first.items.count)
        let second = try feed.subscribe(limit: 10, maxInFlight: 0)
        #expect(second.items == first.items)
        #expect(content.reads == reads, "the rows read for the first snapshot were kept")
        // The chat at the bottom, whose content was never read, changes: it comes whole.
        var bottom = stream.list.last!
        bottom.revision += 100
        bottom.title = "renamed"
        _ = feed.apply([ChatChange(chatID: bottom.id, chat: bottom)])
        #expect(feed.index.chat(id: bottom.id) == bottom)
        #expect(content.reads == reads, "a changed chat is whole without a read")
    }

    /// A row that came into a window from below (its content read for the batch, not kept) and
    /// then gets a change that changes nothing (same revision and fields) gets no update, as from a
    /// list loaded whole.
    @Test func aChangeThatChangesNothingIsNoUpdateOfARowWithoutContent() throws {
        var generator = SeededGenerator(seed: 87)
        var stream = ChatStream(withLists: false)
        for _ in 0..<30 { _ = stream.nextChange(using: &generator) }
        let content = StreamContent()
        content.current = stream.chats
        let whole = LiveFeed(chats: stream.list)
        let narrow = LiveFeed(chats: stream.list.map(withoutContent), content: content)
        for feed in [whole, narrow] { _ = try feed.subscribe(limit: 3, maxInFlight: 0) }
        let top = stream.list[0]
        let entering = stream.list[3]
        let removal = [ChatChange(chatID: top.id, chat: nil)]
        let expected = whole.apply(removal)
        #expect(narrow.apply(removal) == expected)
        guard case .batch(_, _, _, let batch) = expected.first else { Issue.record("no batch"); return }
        #expect(batch.inserts.map(\.item.id) == [entering.id], "the fourth row came into the window")
        let nothing = [ChatChange(chatID: entering.id, chat: stream.chats[entering.id])]
        #expect(whole.apply(nothing) == [])
        #expect(narrow.apply(nothing) == [])
    }
}
