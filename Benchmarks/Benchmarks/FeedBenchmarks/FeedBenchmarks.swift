import Benchmark
import BenchmarkSupport
import ChangeFeed
import ChatModel

// The live chat index of the feed (docs/PROTOCOL.md, The live feed; Benchmarks/README.md): a `RankedSet<ChatOrderKey>` of 1,000,000 chats.
//
// Chat ids are 17 bytes ("chat:000000000042"), longer than Swift's 15-byte small-string form, so
// every comparison of equal dates goes through the heap bytes as real ids would.

let chatCount = 1_000_000
let newestDate: Int64 = 1_800_000_000_000

func chatID(_ i: Int) -> String {
    let digits = String(i)
    return "chat:" + String(repeating: "0", count: max(0, 12 - digits.count)) + digits
}

/// The sorted keys of `chatCount` chats: chat i's last message is i seconds older than chat 0's.
func sortedKeys() -> [ChatOrderKey] {
    (0..<chatCount).map { ChatOrderKey(lastMessageDate: newestDate - Int64($0) * 1_000, id: chatID($0)) }
}

/// Mutable state that outlives one benchmark iteration: the index and the next "now".
final class FeedIndex: @unchecked Sendable {
    var set: RankedSet<ChatOrderKey>
    var now: Int64
    var rng = SplitMix64(seed: 42)

    init() {
        set = RankedSet(sorted: sortedKeys())
        now = newestDate
    }

    /// The chat at `rank` gets a message: it moves to the top. Returns its new rank (0).
    func bump(rank: Int) -> Int {
        let chat = set.element(at: rank)
        set.remove(chat)
        now += 1
        let bumped = ChatOrderKey(lastMessageDate: now, id: chat.id)
        set.insert(bumped)
        return set.rank(of: bumped)
    }
}

/// A feed of `chatCount` chats with one subscription that needs no acks, so every event yields
/// its batches at once; its bottom chat's events come from `BottomChatEvents`, and
/// `makeBottomEvent()` alone is the baseline to subtract.
final class BumpedFeed: @unchecked Sendable {
    let feed: LiveFeed
    var rng = SplitMix64(seed: 7)
    var events: BottomChatEvents

    /// With `sameList` more subscriptions like the first, and `otherList` subscriptions of the
    /// archive, which the events never touch.
    init(limit: Int?, sameList: Int = 0, otherList: Int = 0) {
        let chats = (0..<chatCount).map {
            Chat(id: chatID($0), title: "Chat \($0)", createdAt: 0, lastMessage: nil,
                 lastMessageDate: newestDate - Int64($0) * 1_000, unread: 0, revision: 1)
        }
        events = BottomChatEvents(chats: chats, now: newestDate)
        feed = LiveFeed(chats: chats, options: FeedOptions(resetThreshold: .infinity, maxSubscriptions: 1 + sameList + otherList))
        for _ in 0...sameList { _ = try! feed.subscribe(limit: limit, maxInFlight: 0) }
        for _ in 0..<otherList { _ = try! feed.subscribe(view: ChatListView(list: .archive), limit: limit, maxInFlight: 0) }
    }

    /// The bottom chat gets a message: it moves to the top and changes.
    func bumpBottom() -> [FeedNotification] {
        feed.apply(makeBottomEvent())
    }

    /// The bottom chat's next message as a change, made but not applied: the baseline of
    /// `bumpBottom()`.
    func makeBottomEvent() -> [ChatChange] {
        events.next()
    }

    /// A chat among the 100 most recent gets a message (where a messenger's traffic is).
    func bumpRecent() -> [FeedNotification] {
        bump(rank: Int(rng.next() % 100))
    }

    private func bump(rank: Int) -> [FeedNotification] {
        var chat = feed.index.chats(from: rank, count: 1)[0]
        events.now += 1
        let now = events.now
        chat.lastMessageDate = now
        chat.lastMessage = LastMessage(id: "m\(now)", sender: "ann", text: "hi", sentAt: now)
        chat.unread += 1
        chat.revision += 1
        return feed.apply([ChatChange(chatID: chat.id, chat: chat)])
    }
}

/// A feed of `chatCount` chats in two lists (every tenth chat archived, every third unread) with
/// subscriptions that need no acks, and a stream of events that touches every view: the bottom
/// chat of `main` gets a message (to the top of `main` and into or up `main`'s unread-only view),
/// the bottom chat of `archive` gets one, and the top unread chat of `main` is read (it leaves the
/// unread-only view and changes in `main`).
final class ListsFeed: @unchecked Sendable {
    let feed: LiveFeed
    var now: Int64 = newestDate
    var step = 0
    static let unreadMain = ChatListView(list: .main, unreadOnly: true)

    init(views: [ChatListView], limit: Int?) {
        let chats = (0..<chatCount).map {
            Chat(id: chatID($0), title: "Chat \($0)", createdAt: 0, lastMessage: nil,
                 lastMessageDate: newestDate - Int64($0) * 1_000, unread: $0 % 3 == 0 ? 1 : 0, revision: 1,
                 list: $0 % 10 == 9 ? .archive : .main)
        }
        feed = LiveFeed(chats: chats, options: FeedOptions(resetThreshold: .infinity))
        for view in views { _ = try! feed.subscribe(view: view, limit: limit, maxInFlight: 0) }
    }

    func nextEvent() -> [FeedNotification] {
        feed.apply(makeEvent())
    }

    /// The next event, not applied: making it alone is the baseline of the figures above.
    func makeEvent() -> [ChatChange] {
        step += 1
        // feed.index is read in place: a copy held across apply would copy the whole index.
        var chat: Chat
        switch step % 3 {
        case 0, 1:
            let view = step % 3 == 0 ? ChatListView.main : ChatListView(list: .archive)
            chat = feed.index.chats(from: feed.index.count(of: view) - 1, count: 1, in: view)[0]
            now += 1
            chat.lastMessageDate = now
            chat.lastMessage = LastMessage(id: "m\(now)", sender: "ann", text: "hi", sentAt: now)
            chat.unread += 1
        default:
            chat = feed.index.chats(from: 0, count: 1, in: Self.unreadMain)[0]
            chat.unread = 0
        }
        chat.revision += 1
        return [ChatChange(chatID: chat.id, chat: chat)]
    }
}

let benchmarks: @Sendable () -> Void = {
    let perEvent = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
        timeUnits: .nanoseconds,
        warmupIterations: 10,
        scalingFactor: .kilo,  // 1,000 events per iteration; starred rows are per event
        maxDuration: .seconds(10),
        maxIterations: 2_000
    )

    // One event: a chat gets a message, so it leaves its place and becomes the top; the feed then
    // needs its new index. element(at:) + remove + insert + rank, per event, for the bottom chat,
    // a chat picked uniformly at random (any chat can get a message), and one of the 100 most
    // recent (where a messenger's traffic is).
    let picks: [(String, @Sendable (FeedIndex) -> Int)] = [
        ("bump bottom chat to top (remove+insert+rank)", { $0.set.count - 1 }),
        ("bump random chat to top (element(at:)+remove+insert+rank)", { Int($0.rng.next() % UInt64($0.set.count)) }),
        ("bump one of the top 100 to top (element(at:)+remove+insert+rank)", { Int($0.rng.next() % 100) }),
    ]
    for (name, pick) in picks {
        Benchmark("RankedSet 1M: \(name)", configuration: perEvent) { benchmark, index in
            for _ in benchmark.scaledIterations {
                blackHole(index.bump(rank: pick(index)))
            }
        } setup: {
            FeedIndex()
        }
    }

    // Lookups alone: rank of a random member and the element at a random rank.
    Benchmark("RankedSet 1M: rank(of:) + element(at:) of a random chat", configuration: perEvent) {
        benchmark, index in
        for _ in benchmark.scaledIterations {
            let rank = Int(index.rng.next() % UInt64(index.set.count))
            blackHole(index.set.rank(of: index.set.element(at: rank)))
        }
    } setup: {
        FeedIndex()
    }

    // The whole per-event path of the feed: the index update and the subscription's batches (a
    // move to the top, then the deferred update) for a chat of 1,000,000 bumped to the top: the
    // bottom one, or one of the 100 most recent.
    let bumps: [(String, @Sendable (BumpedFeed) -> [FeedNotification])] = [
        ("bottom chat", { $0.bumpBottom() }), ("one of the top 100", { $0.bumpRecent() }),
    ]
    for (name, limit) in [("full list", nil as Int?), ("top-50 window", 50)] {
        for (label, bump) in bumps {
            Benchmark("ChangeFeed 1M, \(name) subscription: \(label) bumped to the top, batches out", configuration: perEvent) {
                benchmark, live in
                for _ in benchmark.scaledIterations {
                    blackHole(bump(live))
                }
            } setup: {
                BumpedFeed(limit: limit)
            }
        }
    }

    // The baseline of the bottom-chat rows: the same events made, not applied.
    Benchmark("ChangeFeed 1M, baseline: bottom chat's event made, not applied", configuration: perEvent) {
        benchmark, live in
        for _ in benchmark.scaledIterations {
            blackHole(live.makeBottomEvent())
        }
    } setup: {
        BumpedFeed(limit: nil)
    }

    // Fan-out: the bottom chat bumped with 10 more subscriptions of the same full list (each
    // costs a fraction of the first), and with 100 subscriptions of the archive beside the one of
    // main (they cost nothing for an event of main: compare with the one-subscription row above).
    for (label, sameList, otherList) in [("+ 10 of the same list", 10, 0), ("+ 100 of the archive", 0, 100)] {
        Benchmark("ChangeFeed 1M, full list subscription \(label): bottom chat bumped to the top, batches out", configuration: perEvent) {
            benchmark, live in
            for _ in benchmark.scaledIterations {
                blackHole(live.bumpBottom())
            }
        } setup: {
            BumpedFeed(limit: nil, sameList: sameList, otherList: otherList)
        }
    }

    // Baselines of the chat-list events below, in the same process: making them without applying
    // them, and applying them with no subscription (the index alone).
    let baselines: [(String, @Sendable (ListsFeed) -> Any)] = [
        ("baseline: mixed event made, not applied", { $0.makeEvent() }),
        ("no subscription: mixed event, index only", { $0.nextEvent() }),
    ]
    for (label, step) in baselines {
        Benchmark("ChangeFeed 1M lists, \(label)", configuration: perEvent) { benchmark, live in
            for _ in benchmark.scaledIterations {
                blackHole(step(live))
            }
        } setup: {
            ListsFeed(views: [], limit: nil)
        }
    }

    // Chat lists: the same mixed events (a message to main's bottom chat, one to archive's, main's
    // top unread chat read) with one subscription to main (the baseline) and with subscriptions to
    // main, archive and main's unread-only view at once; full lists and top-50 windows.
    for (name, limit) in [("full lists", nil as Int?), ("top-50 windows", 50)] {
        for (label, views) in [
            ("main only", [ChatListView.main]),
            ("main + archive + main unreadOnly", [.main, ChatListView(list: .archive), ListsFeed.unreadMain]),
        ] {
            Benchmark("ChangeFeed 1M lists, \(name), \(label): mixed event, batches out", configuration: perEvent) {
                benchmark, live in
                for _ in benchmark.scaledIterations {
                    blackHole(live.nextEvent())
                }
            } setup: {
                ListsFeed(views: views, limit: limit)
            }
        }
    }

    // A window snapshot: the top 50.
    Benchmark("RankedSet 1M: top-50 window snapshot", configuration: perEvent) { benchmark, index in
        for _ in benchmark.scaledIterations {
            blackHole(index.set.elements(from: 0, count: 50))
        }
    } setup: {
        FeedIndex()
    }

    // A load at start-up: one per iteration, in milliseconds.
    let load = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(20),
        maxIterations: 20
    )

    // Start-up: bulk load of 1,000,000 sorted keys (the keys themselves are built in setup; the
    // release of the loaded set is not measured).
    Benchmark("RankedSet 1M: bulk load init(sorted:)", configuration: load) { benchmark, keys in
        benchmark.startMeasurement()
        let set = RankedSet(sorted: keys)
        benchmark.stopMeasurement()
        blackHole(set)
    } setup: {
        sortedKeys()
    }

    // Start-up: the index of 1,000,000 chats that come in list order, as the store loads them
    // (the id table, each view's keys, the ranked sets); the chats are built in setup.
    Benchmark("ChatIndex 1M: init(chats:) in list order", configuration: load) { benchmark, chats in
        benchmark.startMeasurement()
        let index = ChatIndex(chats: chats)
        benchmark.stopMeasurement()
        blackHole(index)
    } setup: {
        (0..<chatCount).map {
            Chat(id: chatID($0), title: "", createdAt: 0, lastMessage: nil,
                 lastMessageDate: newestDate - Int64($0) * 1_000, unread: $0 % 3 == 0 ? 1 : 0, revision: 1)
        }
    }

    resumeBenchmarks()
}
