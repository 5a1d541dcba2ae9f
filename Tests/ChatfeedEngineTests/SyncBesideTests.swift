import ChatfeedEngine
import ChatStore
import Foundation
import JSONCodec
import Testing
import TestSupport

/// With `durability` full, a group commit's writes are answered, and the feed caught up on them,
/// only once its sync has ended. While a subscription waits for an ack, the sync runs on a thread
/// of its own and the engine reads meanwhile: what an ack lets out of committed, durable writes
/// goes at once — unless it shows content the group being synced changed. Otherwise the engine
/// syncs the group itself. A failed sync answers its writes with the error and refuses every
/// later write.
///
/// The syncs are held at `EngineOptions.logSyncWillBegin`. Each scenario runs on a thread of its
/// own against an output that delivers its lines when the engine flushes it (as
/// GroupCommitLingerTests do, for the same reason).
@Suite struct SyncBesideTests {
    private static func post(_ id: Int, _ message: String, to chat: String) -> [UInt8] {
        SessionClient.line(id: id, "message.post", [
            "chat": .string(chat), "id": .string(message), "sender": "me", "text": .string("text of \(message)"),
            "sentAt": .integer(Int64(3000 + id)),
        ])
    }

    /// What a scenario saw: whether each wait was met, and the lines delivered.
    struct Seen: Sendable {
        var met: [Bool] = []
        var lines: [String] = []
        var lostDatabase: ChatStoreError?
        /// The thread of each group's sync, in order.
        var syncThreads: [ObjectIdentifier] = []

        func json() throws -> [JSONValue] { try lines.map { try JSONValue(parsing: Array($0.utf8)) } }
    }

    /// Runs `scenario` on a thread of its own against a session of a new engine whose syncs pass
    /// `gate`, and returns what it saw (with the engine's lost database once stopped).
    private static func run(
        prepare: (String) async throws -> Void = { _ in },
        _ scenario: @escaping @Sendable (EngineSession, ControlledOutput, SyncGate) -> Seen
    ) async throws -> Seen {
        let directory = try TemporaryDirectory()
        try await prepare(directory.path("sync.sqlite"))
        let gate = SyncGate()
        var options = EngineOptions(databasePath: directory.path("sync.sqlite"))
        options.logSyncWillBegin = { try gate.pass() }
        let engine = try ChatEngine(options: options)
        let output = ControlledOutput()
        let session = engine.openSession(output: output)
        var seen = await offPool { scenario(session, output, gate) }
        gate.release()
        engine.stop()
        engine.waitUntilStopped()
        seen.lostDatabase = engine.lostDatabase
        seen.syncThreads = gate.threads
        return seen
    }

    /// Two chats, a subscription of the main list with `maxInFlight` 1, and a post that moves a
    /// above b: the snapshot, the two creates and batch 1, then the post's answer and batch 2
    /// (6 lines); batch 2's deferred update of a waits for its ack.
    private static func setUp(_ session: EngineSession, _ output: ControlledOutput, _ seen: inout Seen) {
        _ = session.send(SessionClient.line(id: 0, "feed.subscribe", ["maxInFlight": 1]))
        _ = session.send(
            SessionClient.line(id: 1, "chat.create", ["chat": "a", "title": "A", "createdAt": 1000])
                + SessionClient.line(id: 2, "chat.create", ["chat": "b", "title": "B", "createdAt": 2000]))
        seen.met.append(output.waitForLines(4, seconds: 30))
        _ = session.send(SessionClient.ackLine(1) + post(3, "m1", to: "a"))
        seen.met.append(output.waitForLines(6, seconds: 30))
    }

    /// Two chats made before the engine starts, so that its lists load them without content:
    /// b (below) and c (on top).
    private static func createChatsBAndC(_ path: String) async throws {
        let engine = try ChatEngine(options: EngineOptions(databasePath: path))
        defer { engine.stop(); engine.waitUntilStopped() }
        let client = SessionClient(engine.openInProcessSession())
        for (chat, date) in [("b", 1000), ("c", 2000)] {
            _ = try await client.result("chat.create", ["chat": .string(chat), "title": .string(chat), "createdAt": .integer(Int64(date))])
        }
    }

    /// Sends `write` with the syncs held, then the ack of `seq` while its sync waits; checks that
    /// nothing more was delivered meanwhile, and lets the sync end. Whether each step was met.
    private static func ackWhileSyncing(
        _ write: [UInt8], ack seq: Int, _ session: EngineSession, _ output: ControlledOutput, _ gate: SyncGate
    ) -> [Bool] {
        let delivered = output.deliveredLines
        gate.hold()
        _ = session.send(write)
        let syncing = gate.waitForASync(seconds: 30)
        _ = session.send(SessionClient.ackLine(seq))
        Thread.sleep(forTimeInterval: 0.3)
        let held = output.deliveredLines == delivered
        gate.release()
        return [syncing, held]
    }

    @Test func aWriteAndTheReadAfterItAreAnsweredOnceItsSyncEnded() async throws {
        let seen = try await Self.run { session, output, gate in
            var seen = Seen()
            _ = session.send(SessionClient.line(id: 1, "chat.create", ["chat": "a", "title": "A", "createdAt": 1000]))
            seen.met.append(output.waitForLines(1, seconds: 30))
            gate.hold()
            _ = session.send(Self.post(2, "m1", to: "a") + SessionClient.line(id: 3, "chats.list"))
            seen.met.append(gate.waitForASync(seconds: 30))
            Thread.sleep(forTimeInterval: 0.3)
            // Committed, not yet durable: neither the post nor the read after it is answered.
            seen.met.append(output.deliveredLines == 1)
            gate.release()
            seen.met.append(output.waitForLines(3, seconds: 30))
            seen.lines = output.deliveredText
            return seen
        }
        #expect(seen.met == [true, true, true, true], "\(seen.lines)")
        let lines = try seen.json()
        #expect(lines.map { $0["id"] } == [1, 2, 3])
        #expect(lines.last?["result"]?["items"]?.arrayValue?.first?["lastMessage"]?["id"] == .string("m1"), "\(seen.lines)")
        #expect(seen.lostDatabase == nil)
    }

    /// The batch an ack releases while the next group syncs shows durable writes only: it goes
    /// out at once, before that group is answered (the engine does not wait for the sync to read
    /// the ack).
    @Test func anAckReleasesADurableBatchWhileTheNextGroupSyncs() async throws {
        let seen = try await Self.run { session, output, gate in
            var seen = Seen()
            Self.setUp(session, output, &seen)
            gate.hold()
            _ = session.send(Self.post(4, "m2", to: "b"))
            seen.met.append(gate.waitForASync(seconds: 30))
            // Batch 3 (a's update, m1) goes out while m2's sync is held.
            _ = session.send(SessionClient.ackLine(2))
            seen.met.append(output.waitForLines(7, seconds: 30))
            Thread.sleep(forTimeInterval: 0.2)
            seen.met.append(output.deliveredLines == 7)
            gate.release()
            seen.met.append(output.waitForLines(8, seconds: 30))
            seen.lines = output.deliveredText
            return seen
        }
        #expect(seen.met == [true, true, true, true, true, true], "\(seen.lines)")
        let lines = try seen.json()
        guard lines.count == 8 else { return }
        let batch = try #require(lines[6]["params"])
        #expect(batch["seq"] == .integer(3), "\(lines[6])")
        #expect(batch["updates"]?.arrayValue?.first?["chat"]?["lastMessage"]?["id"] == .string("m1"), "\(lines[6])")
        #expect(lines[7]["id"] == .integer(4), "\(lines[7])")
    }

    /// A released batch whose row reads the content of a chat the syncing group changed waits
    /// for the sync: it would show the group's last message before the group is durable. (A
    /// chat loaded at start has no content in the lists until a row of it goes out: here b,
    /// below a one-row window, enters it when c leaves for the archive.)
    @Test func aReleasedBatchReadingContentOfTheSyncingGroupWaitsForIt() async throws {
        let seen = try await Self.run(prepare: Self.createChatsBAndC) { session, output, gate in
            var seen = Seen()
            _ = session.send(SessionClient.line(id: 0, "feed.subscribe", ["limit": 1, "maxInFlight": 1]))
            // Batch 1 (c's update) goes out; c's archiving waits for its ack.
            _ = session.send(Self.post(1, "m1", to: "c"))
            seen.met.append(output.waitForLines(3, seconds: 30))
            _ = session.send(SessionClient.line(id: 2, "chat.archive", ["chat": "c"]))
            seen.met.append(output.waitForLines(4, seconds: 30))
            // The ack lets batch 2 out: c's deletion and b's insertion, b's content read now.
            seen.met += Self.ackWhileSyncing(Self.post(3, "m2", to: "b"), ack: 1, session, output, gate)
            seen.met.append(output.waitForLines(6, seconds: 30))
            seen.lines = output.deliveredText
            return seen
        }
        #expect(seen.met == [true, true, true, true, true], "\(seen.lines)")
        let lines = try seen.json()
        guard lines.count == 6 else { return }
        // m2 is answered first, then batch 2, which shows it.
        #expect(lines[4]["id"] == .integer(3), "\(lines[4])")
        let batch = try #require(lines[5]["params"])
        #expect(batch["seq"] == .integer(2), "\(lines[5])")
        let inserted = batch["inserts"]?.arrayValue?.first?["chat"]
        #expect(inserted?["id"] == .string("b") && inserted?["lastMessage"]?["id"] == .string("m2"), "\(lines[5])")
    }

    /// With room for two batches in flight, the batch held for the sync (its row read content the
    /// group changed) still goes out before the batch of that group's catch-up.
    @Test func aBatchHeldForTheSyncKeepsItsPlaceBeforeTheGroupsBatch() async throws {
        let seen = try await Self.run(prepare: Self.createChatsBAndC) { session, output, gate in
            var seen = Seen()
            _ = session.send(SessionClient.line(id: 0, "feed.subscribe", ["limit": 1, "maxInFlight": 2]))
            // Batches 1 and 2 (c's updates) fill the window of two; c's archiving waits.
            _ = session.send(Self.post(1, "m1", to: "c"))
            seen.met.append(output.waitForLines(3, seconds: 30))
            _ = session.send(Self.post(2, "m2", to: "c"))
            seen.met.append(output.waitForLines(5, seconds: 30))
            _ = session.send(SessionClient.line(id: 3, "chat.archive", ["chat": "c"]))
            seen.met.append(output.waitForLines(6, seconds: 30))
            // The ack of 2 lets batch 3 out (c leaves, b enters with m3): held for the sync. After
            // it, b's update (m3 posted) fits the window too: batch 4, after batch 3.
            seen.met += Self.ackWhileSyncing(Self.post(4, "m3", to: "b"), ack: 2, session, output, gate)
            seen.met.append(output.waitForLines(8, seconds: 30))
            Thread.sleep(forTimeInterval: 0.2)
            seen.lines = output.deliveredText
            return seen
        }
        #expect(seen.met == [true, true, true, true, true, true], "\(seen.lines)")
        let lines = try seen.json()
        let seqs = lines.compactMap { $0["method"] == .string("feed.batch") ? $0["params"]?["seq"]?.int64Value : nil }
        #expect(seqs == seqs.sorted() && seqs.count >= 3, "\(seen.lines)")
        guard lines.count >= 8 else { return }
        #expect(lines[6]["id"] == .integer(4), "\(lines[6])")
        #expect(lines[7]["params"]?["seq"] == .integer(3), "\(lines[7])")
    }

    /// A write that came while the sync that fails ran beside the engine (a batch waits for an
    /// ack) is refused too: its own sync would succeed (Linux reports a failed writeback once),
    /// over frames that may not be on the disk.
    @Test func aWriteTakenDuringAFailingSyncIsRefused() async throws {
        let seen = try await Self.run { session, output, gate in
            var seen = Seen()
            Self.setUp(session, output, &seen)
            gate.hold()
            gate.failNext()
            _ = session.send(Self.post(4, "m2", to: "b"))
            seen.met.append(gate.waitForASync(seconds: 30))
            _ = session.send(Self.post(5, "m3", to: "a"))
            Thread.sleep(forTimeInterval: 0.3)  // taken by the engine while the sync runs
            gate.release()
            seen.met.append(output.waitForLines(8, seconds: 30))
            seen.lines = output.deliveredText
            return seen
        }
        #expect(seen.met == [true, true, true, true], "\(seen.lines)")
        // setUp's groups synced on the engine's thread, the failing one beside it.
        #expect(seen.syncThreads.count >= 3 && Set(seen.syncThreads.dropLast()).count == 1 && seen.syncThreads.last != seen.syncThreads.first, "\(seen.syncThreads)")
        let lines = try seen.json()
        guard lines.count == 8 else { return }
        #expect(lines[6]["error"]?["code"] == .integer(-32006), "\(lines[6])")
        #expect(lines[7]["error"]?["code"] == .integer(-32006), "\(lines[7])")
    }

    /// A group syncs beside the engine only while a subscription waits for an ack (an ack read
    /// during the sync may then let a batch out); otherwise on the engine's own thread, sparing
    /// two threads' hand-offs. Either way it is answered once durable.
    @Test func aGroupSyncsBesideTheEngineOnlyWhileASubscriptionWaits() async throws {
        let seen = try await Self.run { session, output, gate in
            var seen = Seen()
            // No subscription: the engine syncs the chat's creation itself.
            _ = session.send(SessionClient.line(id: 1, "chat.create", ["chat": "a", "title": "A", "createdAt": 1000]))
            seen.met.append(output.waitForLines(1, seconds: 30))
            // A subscription that acks all it gets waits for nothing: still the engine's.
            _ = session.send(SessionClient.line(id: 2, "feed.subscribe", ["maxInFlight": 1]))
            seen.met.append(output.waitForLines(2, seconds: 30))
            _ = session.send(SessionClient.line(id: 3, "chat.create", ["chat": "b", "title": "B", "createdAt": 2000]))
            seen.met.append(output.waitForLines(4, seconds: 30))  // its answer and batch 1
            _ = session.send(SessionClient.ackLine(1))
            // Its post moves a above b: batch 2 goes, a's deferred update waits for its ack, and
            // the next group syncs beside the engine.
            _ = session.send(Self.post(4, "m1", to: "a"))
            seen.met.append(output.waitForLines(6, seconds: 30))
            _ = session.send(Self.post(5, "m2", to: "b"))
            seen.met.append(output.waitForLines(7, seconds: 30))
            seen.lines = output.deliveredText
            return seen
        }
        #expect(seen.met == [true, true, true, true, true], "\(seen.lines)")
        // Three groups on one thread (the engine's), the last on another (the syncer's).
        let threads = seen.syncThreads
        #expect(threads.count == 4 && Set(threads.prefix(3)).count == 1 && threads[3] != threads[0], "\(threads)")
    }

    @Test func aFailedSyncAnswersItsWritesWithTheErrorAndRefusesLaterOnes() async throws {
        let seen = try await Self.run { session, output, gate in
            var seen = Seen()
            _ = session.send(SessionClient.line(id: 1, "chat.create", ["chat": "a", "title": "A", "createdAt": 1000]))
            seen.met.append(output.waitForLines(1, seconds: 30))
            gate.failNext()
            _ = session.send(Self.post(2, "m1", to: "a"))
            seen.met.append(output.waitForLines(2, seconds: 30))
            _ = session.send(Self.post(3, "m2", to: "a") + SessionClient.line(id: 4, "chats.list"))
            seen.met.append(output.waitForLines(4, seconds: 30))
            seen.lines = output.deliveredText
            return seen
        }
        #expect(seen.met == [true, true, true], "\(seen.lines)")
        let lines = try seen.json()
        guard lines.count == 4 else { return }
        #expect(lines[0]["result"] != nil)
        for line in lines[1...2] {
            #expect(line["error"]?["code"] == .integer(-32006), "\(line)")
            #expect(line["error"]?["message"]?.stringValue?.contains("failed to sync") == true, "\(line)")
        }
        // Reads are answered: the store shows what it holds.
        #expect(lines[3]["result"]?["items"]?.arrayValue?.count == 1, "\(lines[3])")
        guard case .syncFailed = seen.lostDatabase else {
            Issue.record("lostDatabase: \(String(describing: seen.lostDatabase))")
            return
        }
    }
}

/// Where the engine's syncs wait while a test holds them, or fail when it says so.
final class SyncGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var held = false
    private var waiting = 0
    private var failing = false
    /// The thread of each sync that passed, in order.
    var threads: [ObjectIdentifier] { condition.withLock { passedThreads } }
    private var passedThreads: [ObjectIdentifier] = []

    struct InjectedFailure: Error, CustomStringConvertible {
        var description: String { "an injected sync failure" }
    }

    /// Called before each sync, on the thread that syncs.
    func pass() throws {
        condition.lock()
        defer { condition.unlock() }
        passedThreads.append(ObjectIdentifier(Thread.current))
        waiting += 1
        condition.broadcast()
        while held { condition.wait() }
        waiting -= 1
        if failing {
            failing = false
            throw InjectedFailure()
        }
    }

    func hold() { condition.withLock { held = true } }

    func release() {
        condition.withLock {
            held = false
            condition.broadcast()
        }
    }

    /// The next sync fails.
    func failNext() { condition.withLock { failing = true } }

    /// Waits until a sync waits at the gate, at most `seconds`.
    func waitForASync(seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while waiting == 0 { if !condition.wait(until: deadline) { return waiting > 0 } }
        return true
    }
}
