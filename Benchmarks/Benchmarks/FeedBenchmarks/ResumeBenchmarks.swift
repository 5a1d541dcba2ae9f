import Benchmark
import BenchmarkSupport
import ChangeFeed
import ChatModel
import WireProtocol

// Resume (docs/PROTOCOL.md, The live feed): a client that shows a 10,000-row window comes back after some of its chats
// changed, and subscribes with `known`. Measured: the daemon's work for the response (the resume
// diff and the result's JSON) and the response's bytes, beside a plain subscribe of the same window.

let resumeWindow = 10_000
let resumeChatCount = 100_000

/// A feed of 100,000 chats, the rows a client showed of its top 10,000, and then `changedShare`
/// of those chats changed: half of them got a message (to the top), the others were read or
/// renamed (updated in place).
final class ResumeScenario: @unchecked Sendable {
    let feed: LiveFeed
    let known: [KnownRow]

    init(changedShare: Double) {
        let chats = (0..<resumeChatCount).map {
            Chat(id: chatID($0), title: "Chat \($0)", createdAt: 0,
                 lastMessage: LastMessage(id: "m\($0)", sender: "ann", text: "see you at the station at nine", sentAt: newestDate - Int64($0) * 1_000),
                 lastMessageDate: newestDate - Int64($0) * 1_000, unread: 1, revision: 1)
        }
        feed = LiveFeed(chats: chats, options: FeedOptions(resetThreshold: .infinity))
        let shown = try! feed.subscribe(limit: resumeWindow, maxInFlight: 0).items
        known = shown.map { KnownRow(id: $0.id, revision: $0.revision) }
        var rng = SplitMix64(seed: 7)
        var order = Array(shown.indices)
        for i in order.indices.reversed() { order.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
        var now = newestDate
        var changes: [ChatChange] = []
        for (n, position) in order.prefix(Int(Double(resumeWindow) * changedShare)).enumerated() {
            var chat = shown[position]
            chat.revision = 2
            if n % 2 == 0 {
                now += 1
                chat.lastMessage = LastMessage(id: "n\(n)", sender: "bob", text: "on my way", sentAt: now)
                chat.lastMessageDate = now
                chat.unread += 1
            } else if n % 4 == 1 {
                chat.unread = 0
            } else {
                chat.title += " (renamed)"
            }
            changes.append(ChatChange(chatID: chat.id, chat: chat))
        }
        _ = feed.apply(changes)
    }

    /// The resume: the diff and the result's bytes; the subscription is ended again.
    func resume() -> Int {
        let snapshot = try! feed.subscribe(limit: resumeWindow, maxInFlight: 0, known: known)
        var bytes: [UInt8] = []
        WireResults.appendFeedSubscribe(
            subscription: snapshot.subscription, count: snapshot.items.count, total: snapshot.counts.total,
            unread: snapshot.counts.unread, batches: snapshot.batches!, to: &bytes)
        try! feed.unsubscribe(snapshot.subscription)
        return bytes.count
    }

    /// A plain subscribe of the same window: the snapshot and its bytes.
    func snapshot() -> Int {
        let snapshot = try! feed.subscribe(limit: resumeWindow, maxInFlight: 0)
        var bytes: [UInt8] = []
        WireResults.appendFeedSubscribe(
            subscription: snapshot.subscription, total: snapshot.counts.total, unread: snapshot.counts.unread,
            items: snapshot.items, to: &bytes)
        try! feed.unsubscribe(snapshot.subscription)
        return bytes.count
    }
}

let wireBytes = BenchmarkMetric.custom("wire bytes", polarity: .prefersSmaller, useScalingFactor: false)

let resumeBenchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, wireBytes],
        timeUnits: .milliseconds,
        warmupIterations: 3,
        maxDuration: .seconds(10),
        maxIterations: 200
    )
    Benchmark("Resume 10,000-row window: plain subscribe, snapshot + JSON (baseline)", configuration: configuration) {
        benchmark, scenario in
        var bytes = 0
        for _ in benchmark.scaledIterations { bytes = scenario.snapshot() }
        benchmark.measurement(wireBytes, bytes)
    } setup: {
        ResumeScenario(changedShare: 0.1)
    }
    for share in [0.01, 0.1, 0.5] {
        let percent = Int(share * 100)
        Benchmark("Resume 10,000-row window, \(percent)% changed: known → batches + JSON", configuration: configuration) {
            benchmark, scenario in
            var bytes = 0
            for _ in benchmark.scaledIterations { bytes = scenario.resume() }
            benchmark.measurement(wireBytes, bytes)
        } setup: {
            ResumeScenario(changedShare: share)
        }
    }
}
