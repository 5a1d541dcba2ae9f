import BenchmarkSupport
import ChatModel
import ChatStore
import StoreFixtures
import Foundation
import Logging
// The one place that names the engine's module: the engine lives in ChatfeedEngine (issue 17);
// at that merge only this import changes.
import ChatfeedEngine

/// The engine's options in the guard: the shipped configuration's (Config/chatfeed.json) where it
/// changes what a post or a start-up does, with these exceptions so that the counts depend on
/// the code alone:
/// - durability `normal` (the shipped `full` adds one fsync per commit, which no count here sees
///   and which would only slow CI down);
/// - the background checkpoint waits an hour, and does not start early as the log grows
///   (`checkpointEarlyPages` 0): it runs on a thread of its own, so the iteration it lands in
///   would depend on the machine's speed. The writer's own auto-checkpoint (every 14,336 WAL
///   pages) still runs, at the same post every run;
/// - a group commit may hold the write lock for 10 s, not 20 ms: a slow machine would otherwise
///   split a group where a fast one does not;
/// - no quick check at start: it runs on a thread and connection of its own beside the engine
///   (SQLite's work, not ours), and its counts would land in whichever measurement runs when it
///   ends, with a varying share of its reads.
func guardEngineOptions(databasePath: String) -> EngineOptions {
    EngineOptions(
        databasePath: databasePath,
        store: StoreOptions(durability: .normal, cacheSizeKiB: 65_536),
        groupCommitMaxMilliseconds: 10_000,
        quickCheckAtStart: false,
        checkpointIntervalMilliseconds: 3_600_000,
        checkpointEarlyPages: 0)
}

/// A fresh database under the temporary directory: `chats` chats ("chat-000042"), created in
/// group commits of 10,000, each with one message, so that chats order by their last message.
func makeGuardDatabase(name: String, chats: Int) throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chatfeed-guard-bench")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let path = directory.appendingPathComponent("\(name).sqlite").path
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    try seedChats(chats, into: try ChatDatabase(path: path, options: StoreOptions(durability: .normal)))
    return path
}

/// Fails the benchmark run with what the engine said: a guard that measured error responses would
/// guard nothing.
func guardFailure(_ message: String) -> Never {
    FileHandle.standardError.write(Data("GuardBenchmarks: \(message)\n".utf8))
    exit(1)
}

/// The store alone on a database of `chats` chats, committing one seeded post per transaction as
/// the engine does in lockstep (with the engine's store options): single-threaded, so every count
/// repeats exactly, where the engine's also include its watcher thread's timing.
final class StoreCommitFixture: @unchecked Sendable {
    let store: ChatDatabase
    private var rng = SplitMix64(seed: 22)
    private let chats: Int
    private var posted = 0

    init(chats: Int) throws {
        self.chats = chats
        let path = try makeGuardDatabase(name: "store", chats: chats)
        var options = guardEngineOptions(databasePath: path).store
        options.autoCheckpointPages = 16_384  // as the engine sets it
        store = try ChatDatabase(path: path, options: options)
    }

    func post() throws {
        posted += 1
        let chat = seededChatID(Int(rng.next() % UInt64(chats)))
        let message = Message(
            id: "guard-\(posted)", chat: chat, sender: "bob", text: "hello from the guard", sentAt: 1_800_000_000_000 + Int64(posted))
        for result in try store.apply([.postMessage(message)]) { _ = try result.get() }
    }
}

/// One `InProcessEngine` on a database of `chats` chats, with one full-list subscription that
/// acknowledges every notification (`maxInFlight` 1), posting to seeded random chats in lockstep,
/// `group` posts at a time (one group commit each, as on a saturated input).
///
/// Every step is one `send`: the acks of the notifications seen so far, `group` `message.post`
/// requests, and a marker (`chats.list` with limit 0). A read commits the writes before it and is answered after
/// their batches, so the marker's response is the last line the step causes: the engine then sees
/// the same sequence of inputs in every run, whatever the machine's load, and the counts repeat.
final class EngineIngestFixture: @unchecked Sendable {
    let engine: InProcessEngine
    private var lines: AsyncStream<[UInt8]>.AsyncIterator
    private var rng = SplitMix64(seed: 18)
    private let chats: Int
    private let group: Int
    /// The subscription's id, as `feed.subscribe` answered.
    private let subscription: String
    private var posted = 0
    private var lastSeq = 0
    private var ackedSeq = 0

    init(chats: Int, group: Int) async throws {
        self.chats = chats
        self.group = group
        let path = try makeGuardDatabase(name: "ingest-\(group)", chats: chats)
        let engine = try InProcessEngine(options: guardEngineOptions(databasePath: path), logger: guardLogger)
        var lines = engine.lines.makeAsyncIterator()
        engine.send(Array(#"{"jsonrpc":"2.0","id":"sub","method":"feed.subscribe","params":{"maxInFlight":1}}"#.utf8) + [0x0A])
        guard let snapshot = await lines.next(), let subscription = snapshot.string(after: #""result":{"subscription":""#) else {
            guardFailure("feed.subscribe did not answer with a subscription")
        }
        self.engine = engine
        self.lines = lines
        self.subscription = subscription
    }

    /// Posts `group` messages and waits for everything they cause.
    func post() async {
        var request: [UInt8] = []
        if lastSeq > ackedSeq {
            request += Array(#"{"jsonrpc":"2.0","method":"feed.ack","params":{"subscription":"\#(subscription)","seq":\#(lastSeq)}}"#.utf8) + [0x0A]
            ackedSeq = lastSeq
        }
        for _ in 0..<group {
            posted += 1
            let chat = seededChatID(Int(rng.next() % UInt64(chats)))
            request += Array(#"{"jsonrpc":"2.0","id":\#(posted),"method":"message.post","params":{"chat":"\#(chat)","id":"guard-\#(posted)","sender":"bob","text":"hello from the guard","sentAt":\#(1_800_000_000_000 + posted)}}"#.utf8) + [0x0A]
        }
        request += Array(#"{"jsonrpc":"2.0","id":"mark","method":"chats.list","params":{"limit":0}}"#.utf8) + [0x0A]
        guard engine.send(request) else { guardFailure("the engine stopped") }
        while true {
            guard let line = await lines.next() else { guardFailure("the engine's output ended") }
            if line.contains(#""error":"#) { guardFailure("error: \(String(decoding: line, as: UTF8.self))") }
            if line.contains(#""id":"mark""#) { return }
            if line.contains(#""method":"feed."#), let seq = line.integer(after: #""seq":"#) { lastSeq = seq }
        }
    }

    /// Ends the engine and waits until it has stopped.
    func close() async {
        engine.close()
        while await lines.next() != nil {}
    }
}

/// Opens an engine on an existing database and closes it: start-up, the chat list loaded into the
/// feed. Returns once `InProcessEngine.init` has returned (the load is done on the caller's thread).
func startEngine(databasePath: String) throws -> InProcessEngine {
    try InProcessEngine(options: guardEngineOptions(databasePath: databasePath), logger: guardLogger)
}

/// The engine's logger in the guard: warnings and errors only (to stderr), so that CI's log shows
/// the check's table, not every start-up.
let guardLogger: Logger = {
    var logger = Logger(label: "chatfeed.engine")
    logger.logLevel = .warning
    return logger
}()

/// Closes `engine` and waits for its last line.
func stopEngine(_ engine: InProcessEngine) async {
    engine.close()
    for await _ in engine.lines {}
}

extension Array where Element == UInt8 {
    /// True when `needle`'s UTF-8 bytes occur in these bytes.
    func contains(_ needle: String) -> Bool {
        firstRange(of: needle) != nil
    }

    /// The decimal integer right after the first `prefix`.
    func integer(after prefix: String) -> Int? {
        guard var i = firstRange(of: prefix)?.upperBound else { return nil }
        var value = 0
        var digits = 0
        while i < count, self[i] >= 0x30, self[i] <= 0x39 {
            value = value * 10 + Int(self[i] - 0x30)
            i += 1
            digits += 1
        }
        return digits == 0 ? nil : value
    }

    /// The characters right after the first `prefix`, up to the next `"`.
    func string(after prefix: String) -> String? {
        guard let start = firstRange(of: prefix)?.upperBound, let end = self[start...].firstIndex(of: 0x22) else { return nil }
        return String(decoding: self[start..<end], as: UTF8.self)
    }

    private func firstRange(of needle: String) -> Range<Int>? {
        let pattern = Array(needle.utf8)
        guard pattern.count <= count else { return nil }
        return withUnsafeBufferPointer { bytes in
            var start = 0
            while start + pattern.count <= bytes.count {
                if bytes[start] == pattern[0], bytes[start..<(start + pattern.count)].elementsEqual(pattern) {
                    return start..<(start + pattern.count)
                }
                start += 1
            }
            return nil
        }
    }
}
