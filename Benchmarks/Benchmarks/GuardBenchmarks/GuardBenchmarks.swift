import Benchmark
import ChangeFeed
import ChatModel
import Foundation

// The performance regression guard (issue 18, Benchmarks/README.md): the key paths measured on counts that do
// not depend on the machine's load — allocations (the MallocInterposer trait), write and read
// calls and the bytes handed to them (/proc/self/io) — and checked by CI (.ci/run) against the
// thresholds committed in Benchmarks/Thresholds/ (see its README: the tolerances, and how to
// update a threshold). No time is measured here: timings live in the other benchmark targets.
//
// Names have no spaces: `thresholds update` writes a name's spaces as "_" in the file name, and
// `thresholds check` looks the file up by the name as it is (benchmark 1.38.1).
//
// Every figure is per iteration; an iteration is 1,000 posts or events where the name says "per
// 1,000" (the printed figures with `--scale` are then per post or event).

/// The chats of the ingest database (the end-to-end figures use 10,000).
let ingestChats = 10_000
/// The chats of the feed bump (Benchmarks/README.md: a bump at 1,000,000 chats).
let bumpChats = 1_000_000
/// The chats loaded at start-up: 100,000, not the README's 1,000,000, so that CI builds the
/// database in seconds; a regression per chat shows the same at either size.
let startupChats = 100_000

/// The tolerance of each metric, in percent of its threshold, from the run-to-run variation
/// measured on the development machine (Benchmarks/Thresholds/README.md has the figures).
enum GuardTolerance {
    /// Counts that repeat exactly run to run (single-threaded code; SQLite's write calls and
    /// bytes): 1% catches one more allocation per event at 1M chats (7 per event) and one more
    /// page written per commit.
    static let exact = 1.0
    /// Allocations through the engine one post per commit, whose watcher thread wakes it a
    /// varying number of times for its own writes (spread of p90 over 10 runs: 4.8%).
    static let engineMallocsLockstep = 8.0
    /// Allocations through the engine in group commits of 100: fewer wake-ups per post (spread of
    /// p90 over 3 runs: 0.6%).
    static let engineMallocsGrouped = 3.0
    /// Allocations of a start-up: the engine thread starts inside the measurement, and how much
    /// of its first round (the watcher, the first wait) lands before `init` returns varies (p90
    /// of 5 iterations over 4 runs, 2026-11-28: 4,789 to 4,890 of about 4,800, 2.1%).
    static let engineMallocsStartup = 5.0
    /// Write calls of a start-up: 11 or 12 from one iteration to the next (2026-11-28), as the
    /// threads the engine starts at its end race the measurement's end; 10% allows that one call.
    static let engineWriteCallsStartup = 10.0
    /// The fan-out's reads, in counts rather than percent: since schema version 11 a post reads
    /// nothing (0 read calls; 4 or 5 bytes at p90 from run to run, not from the store), where a
    /// percentage of 0 allows nothing. Two calls, or two pages of 4 KiB, per 100 posts.
    static let fanOutReads: [BenchmarkMetric: Int] = [.readSyscalls: 2, .readBytesLogical: 8_192]
}

/// The thresholds of a configuration: every metric it measures gets a relative tolerance at p90
/// (the percentile `thresholds check` compares), or the absolute one `absolute` names; none is
/// left at the strict default of 0%.
func guardThresholds(
    _ metrics: [BenchmarkMetric], mallocTolerance: Double, writeCallTolerance: Double,
    absolute: [BenchmarkMetric: Int] = [:]
) -> [BenchmarkMetric: BenchmarkThresholds] {
    var thresholds: [BenchmarkMetric: BenchmarkThresholds] = [:]
    for metric in metrics {
        if let allowance = absolute[metric] {
            thresholds[metric] = BenchmarkThresholds(absolute: [.p90: allowance])
            continue
        }
        let percent = switch metric {
        case .mallocCountTotal: mallocTolerance
        case .writeSyscalls: writeCallTolerance
        default: GuardTolerance.exact
        }
        thresholds[metric] = BenchmarkThresholds(relative: [.p90: percent])
    }
    return thresholds
}

/// A configuration of `metrics` with their tolerances. The iterations are counted, not timed
/// (`maxDuration` is far out of reach), so that every run measures the same iterations.
func guardConfiguration(
    _ metrics: [BenchmarkMetric], iterations: Int, warmup: Int = 1, scaling: BenchmarkScalingFactor = .one,
    mallocTolerance: Double = GuardTolerance.exact, writeCallTolerance: Double = GuardTolerance.exact,
    absolute: [BenchmarkMetric: Int] = [:],
    setup: Benchmark.BenchmarkSetupHook? = nil, teardown: Benchmark.BenchmarkTeardownHook? = nil
) -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: metrics, warmupIterations: warmup, scalingFactor: scaling,
        maxDuration: .seconds(600), maxIterations: iterations,
        thresholds: guardThresholds(
            metrics, mallocTolerance: mallocTolerance, writeCallTolerance: writeCallTolerance, absolute: absolute),
        setup: setup, teardown: teardown)
}

/// Benchmarks run one at a time; their fixtures live here between setup and teardown.
enum GuardFixtures {
    nonisolated(unsafe) static var ingest: EngineIngestFixture?
    nonisolated(unsafe) static var store: StoreCommitFixture?
    nonisolated(unsafe) static var bump: BottomBump?
    nonisolated(unsafe) static var startupDatabase: String?
    nonisolated(unsafe) static var fanOut: FanOutFixture?
}

/// A feed of `bumpChats` chats with one full-list subscription that needs no acks: each event
/// moves the bottom chat to the top with a new message (a move, then its update).
final class BottomBump: @unchecked Sendable {
    let feed: LiveFeed
    var now: Int64 = 1_800_000_000_000

    init() throws {
        let chats = (0..<bumpChats).map {
            Chat(id: "chat:" + String(1_000_000_000_000 + $0), title: "Chat \($0)", createdAt: 0, lastMessage: nil,
                 lastMessageDate: 1_800_000_000_000 - Int64($0) * 1_000, unread: 0, revision: 1)
        }
        feed = LiveFeed(chats: chats)
        _ = try feed.subscribe(limit: nil, maxInFlight: 0)
    }

    func bumpBottom() -> [FeedNotification] {
        var chat = feed.index.chats(from: feed.index.count - 1, count: 1)[0]
        now += 1
        chat.lastMessageDate = now
        chat.lastMessage = LastMessage(id: "m\(now)", sender: "ann", text: "hi", sentAt: now)
        chat.unread += 1
        chat.revision += 1
        return feed.apply([ChatChange(chatID: chat.id, chat: chat)])
    }
}

let benchmarks: @Sendable () -> Void = {
    // 1. Ingest through the engine: message.post through InProcessEngine, the commit, the feed's
    //    batches and one acking full-list subscriber (posts to seeded random chats of 10,000),
    //    one post per commit (lockstep) and in group commits of 100 (a saturated input).
    //    Reads are not counted: the engine's inotify watcher reads its own writes' events as they
    //    come, so their number depends on timing (so do a few allocations: hence their tolerance).
    for group in [1, 100] {
        Benchmark(
            "Ingest-1000-posts-via-InProcessEngine-acking-subscriber" + (group == 1 ? "" : "-groups-of-\(group)"),
            configuration: guardConfiguration(
                [.mallocCountTotal, .writeSyscalls, .writeBytesLogical],
                iterations: 10, scaling: .kilo,
                mallocTolerance: group == 1 ? GuardTolerance.engineMallocsLockstep : GuardTolerance.engineMallocsGrouped,
                setup: { GuardFixtures.ingest = try await EngineIngestFixture(chats: ingestChats, group: group) },
                teardown: {
                    await GuardFixtures.ingest?.close()
                    GuardFixtures.ingest = nil
                })
        ) { benchmark in
            for _ in 0..<(benchmark.scaledIterations.count / group) { await GuardFixtures.ingest!.post() }
        }
    }

    // 1b. The same posts' commits through the store alone, one transaction each: exact counts of
    //     the write path (where issue 18's regression was), reads included.
    Benchmark(
        "Store-commit-1000-posts-one-per-transaction",
        configuration: guardConfiguration(
            [.mallocCountTotal, .writeSyscalls, .writeBytesLogical, .readSyscalls, .readBytesLogical],
            iterations: 10, scaling: .kilo,
            setup: { GuardFixtures.store = try StoreCommitFixture(chats: ingestChats) },
            teardown: { GuardFixtures.store = nil })
    ) { benchmark in
        for _ in benchmark.scaledIterations { try GuardFixtures.store!.post() }
    }

    // 2. A feed bump at 1,000,000 chats: the bottom chat to the top, batches out, one subscription.
    Benchmark(
        "Feed-bump-1000-events-at-1M-chats",
        configuration: guardConfiguration(
            [.mallocCountTotal, .mallocBytesCount], iterations: 10, scaling: .kilo,
            setup: { GuardFixtures.bump = try BottomBump() },
            teardown: { GuardFixtures.bump = nil })
    ) { benchmark in
        let live = GuardFixtures.bump!
        for _ in benchmark.scaledIterations { blackHole(live.bumpBottom()) }
    }

    // 3. Start-up: InProcessEngine opens the database and loads 100,000 chats into the feed
    //    (without the quick check, which runs beside the engine: guardEngineOptions). The engine
    //    is closed after the measurement.
    Benchmark(
        "Startup-InProcessEngine-100k-chats",
        configuration: guardConfiguration(
            [.mallocCountTotal, .mallocBytesCount, .readSyscalls, .readBytesLogical, .writeSyscalls, .writeBytesLogical],
            iterations: 5, mallocTolerance: GuardTolerance.engineMallocsStartup,
            writeCallTolerance: GuardTolerance.engineWriteCallsStartup,
            setup: { GuardFixtures.startupDatabase = try makeGuardDatabase(name: "startup", chats: startupChats) },
            teardown: { GuardFixtures.startupDatabase = nil })
    ) { benchmark in
        benchmark.startMeasurement()
        let engine = try startEngine(databasePath: GuardFixtures.startupDatabase!)
        benchmark.stopMeasurement()
        await stopEngine(engine)
    }

    // 4. Fan-out (issue 19): posts to a chat of 1,000 members through the store alone, one
    //    transaction each: the set-based update of the 999 other memberships (unread, order,
    //    revision), their list counters and the change log's rows. An iteration is 100 posts
    //    (about 0.2 s), so that the check's time stays near the rest of the guard's.
    Benchmark(
        "Fanout-100-posts-to-\(fanOutMembers)-member-chat",
        configuration: guardConfiguration(
            [.mallocCountTotal, .writeSyscalls, .writeBytesLogical, .readSyscalls, .readBytesLogical],
            iterations: 10, absolute: GuardTolerance.fanOutReads,
            setup: { GuardFixtures.fanOut = try FanOutFixture(members: fanOutMembers) },
            teardown: { GuardFixtures.fanOut = nil })
    ) { benchmark in
        for _ in 0..<100 { try GuardFixtures.fanOut!.post() }
    }
}
