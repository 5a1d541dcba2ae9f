// The feed's event without the benchmark harness, for instruction counts and profiles
// (Benchmarks/README.md, 2026-11-28 18:34): the bottom chat of a full-list subscription's list
// bumped to the top, as FeedBenchmarks' "ChangeFeed 1M, full list subscription: bottom chat
// bumped to the top" does, `iterations` × 1,000 times, printing the wall time per event.
//
//     swift build -c release --product FeedProbe
//     .build/release/FeedProbe [iterations, default 3000] [chats, default 1000000]
//     valgrind --tool=callgrind \
//         --toggle-collect='$s10ChangeFeed04LiveB0C5applyySayAA0B12NotificationOGSay9ChatModel0fA0VGF' \
//         .build/release/FeedProbe 20 20000     # instructions of LiveFeed.apply only
import BenchmarkSupport
import ChangeFeed
import ChatModel
import Dispatch

struct Probe {
    let feed: LiveFeed
    var events: BottomChatEvents

    init(chatCount: Int) {
        let newestDate: Int64 = 1_800_000_000_000
        let chats = (0..<chatCount).map {
            Chat(id: Self.chatID($0), title: "Chat \($0)", createdAt: 0, lastMessage: nil,
                 lastMessageDate: newestDate - Int64($0) * 1_000, unread: 0, revision: 1)
        }
        events = BottomChatEvents(chats: chats, now: newestDate)
        feed = LiveFeed(chats: chats, options: FeedOptions(resetThreshold: .infinity, maxSubscriptions: 1))
        _ = try! feed.subscribe(limit: nil, maxInFlight: 0)
    }

    /// 17 bytes, like FeedBenchmarks' ids: longer than a small string.
    static func chatID(_ i: Int) -> String {
        let digits = String(i)
        return "chat:" + String(repeating: "0", count: max(0, 12 - digits.count)) + digits
    }
}

let arguments = CommandLine.arguments.dropFirst().map { Int($0) }
precondition(arguments.allSatisfy { $0 != nil && $0! > 0 }, "usage: FeedProbe [iterations of 1,000 events] [chats]")
let iterations = arguments.first.flatMap { $0 } ?? 3_000
var probe = Probe(chatCount: arguments.dropFirst().first.flatMap { $0 } ?? 1_000_000)
var perEvent: [Double] = []  // µs per event, one entry per iteration
var notifications = 0
for _ in 0..<iterations {
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<1_000 { notifications &+= probe.feed.apply(probe.events.next()).count }
    perEvent.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
}
precondition(notifications >= iterations * 1_000, "every event yields a batch")
// Each tenth of the run, then the whole: the fastest iteration and the median.
let tenth = max(iterations / 10, 1)
for chunk in stride(from: 0, to: iterations, by: tenth) {
    let sorted = perEvent[chunk..<min(chunk + tenth, iterations)].sorted()
    print("iterations \(chunk)…: p0 \(format(sorted[0])) p50 \(format(sorted[sorted.count / 2])) µs per event")
}
let sorted = perEvent.sorted()
print("all: p0 \(format(sorted[0])) p25 \(format(sorted[sorted.count / 4])) p50 \(format(sorted[sorted.count / 2])) µs per event")

func format(_ microseconds: Double) -> String {
    String(Double(Int(microseconds * 100 + 0.5)) / 100)
}
