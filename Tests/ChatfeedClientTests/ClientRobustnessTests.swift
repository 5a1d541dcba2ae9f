import ChatfeedClient
import Foundation
import Logging
import Synchronization
import Testing
import TestSupport

/// What a team adopting the client hit in its first week (issue 23): a subscribe racing a
/// reconnect, calls that wait forever, a buffer of full lists, transports that fail differently,
/// an engine that logs to stderr.
@Suite(.serialized, .hangGuard) struct ClientRobustnessTests {
    /// A transport over another that holds its connections (to close them under the client) and
    /// delays a connect when asked (to make the reconnect window as wide as a large store's).
    final class GatedTransport: ChatfeedTransport {
        let base: any ChatfeedTransport
        let opened = Mutex<[any ChatfeedConnection]>([])
        let connectsStarted = Atomic(0)
        let nextDelay = Mutex<Duration?>(nil)
        init(_ base: any ChatfeedTransport) { self.base = base }
        func connect() async throws -> any ChatfeedConnection {
            connectsStarted.add(1, ordering: .sequentiallyConsistent)
            if let delay = nextDelay.withLock({ delay in defer { delay = nil }; return delay }) {
                try await Task.sleep(for: delay)
            }
            let connection = try await base.connect()
            opened.withLock { $0.append(connection) }
            return connection
        }
    }

    static func makeChats(_ client: ChatClient, count: Int) async throws {
        for start in stride(from: 0, to: count, by: 500) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in start..<min(start + 500, count) {
                    group.addTask { try await client.createChat("c\(number)", title: "chat \(number)", createdAt: Int64(number)) }
                }
                try await group.waitForAll()
            }
        }
    }

    /// Before the fix the reconnect loop also subscribed the new subscription while its own
    /// subscribe waited for the connection: two snapshots, then a seq gap, and an orphaned
    /// engine subscription.
    @Test(arguments: [true, false])
    func subscribingWhileTheClientReconnectsSubscribesOnce(inProcess: Bool) async throws {
        let directory = try TemporaryDirectory()
        let base: any ChatfeedTransport = inProcess
            ? InProcessTransport(database: directory.path("feed.sqlite"))
            : ChildProcessTransport(
                executable: URL(fileURLWithPath: BuiltExecutable.path("chatfeedd")),
                arguments: ["--database", directory.path("feed.sqlite"), "--log-level", "warning"])
        let transport = GatedTransport(base)
        let client = try await ChatClient(transport: transport)
        try await Self.makeChats(client, count: 2_000)
        // The reopen takes 300 ms, as a store of 20,000 chats takes 50–180 ms.
        transport.nextDelay.withLock { $0 = .milliseconds(300) }
        await transport.opened.withLock { $0[0] }.close()
        let deadline = ContinuousClock.now + .seconds(10)
        while transport.connectsStarted.load(ordering: .sequentiallyConsistent) < 2 {
            guard ContinuousClock.now < deadline else { throw ScriptError("the client did not reconnect") }
            try await Task.sleep(for: .milliseconds(1))
        }
        let subscription = try await client.subscribe(SubscriptionOptions(limit: 10))
        var updates = subscription.makeAsyncIterator()
        let first = try #require(try await updates.next())
        #expect(first.kind == .snapshot && first.count == 10)
        try await client.postMessage(chat: "c5", id: "m1", sender: "x", text: "hi", sentAt: 1_000_000)
        let second = try #require(try await updates.next())
        #expect(second.kind == .batches && second.seq == 1, "\(second.kind) seq \(second.seq)")
        #expect(second.chats.first?.id == "c5")
        #expect(try await client.stats().subscriptions.count == 1, "no orphaned engine subscription")
        await client.close()
    }

    @Test func aCallWhoseAnswerNeverComesTimesOut() async throws {
        let transport = ScriptedTransport()
        let client = try await ChatClient(transport: transport, requestTimeout: .milliseconds(200))
        let engine = try await transport.connection(0)
        let started = ContinuousClock.now
        await #expect(throws: ChatfeedClientError.timedOut(method: "chats.list", after: .milliseconds(200))) {
            try await client.listChats()
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        // A late answer is ignored; the next call is answered.
        let request = try await engine.next()
        engine.push(#"{"jsonrpc":"2.0","id":\#(request["id"]!),"result":{"total":0,"unread":\#(zeroUnreadJSON),"items":[]}}"#)
        let listing = Task { try await client.listChats() }
        try await engine.answer("chats.list", result: #"{"total":0,"unread":\#(zeroUnreadJSON),"items":[]}"#)
        #expect(try await listing.value.total == 0)
    }

    @Test func cancellingTheTaskOfACallEndsItWithCancellationError() async throws {
        let transport = ScriptedTransport()
        let client = try await ChatClient(transport: transport, requestTimeout: nil)
        let engine = try await transport.connection(0)
        let call = Task { try await client.listChats() }
        _ = try await engine.next()
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
    }

    /// A write that finds the connection gone ends that connection at once, before its lines end
    /// (a killed child's stdout is read later on a busy machine): the next call waits for the
    /// reconnect and is answered on the new connection, instead of failing on the dead one too
    /// (`EndToEndTests.aKilledChildIsRestartedAndTheSequenceGoesOn` failed in CI so).
    @Test(.hangGuard) func aWriteToALostConnectionEndsItAndTheNextCallWaitsForTheReconnect() async throws {
        let scripted = try await ScriptedClient()
        scripted.engine.sever()
        await #expect(throws: ChatfeedClientError.self) { _ = try await scripted.client.listChats(limit: 1) }
        let call = Task { [client = scripted.client] in try await client.listChats(limit: 1) }
        let second = try await scripted.transport.connection(1)
        try await second.answer("chats.list", result: #"{"total":0,"unread":\#(zeroUnreadJSON),"items":[]}"#)
        #expect(try await call.value.total == 0)
        #expect(scripted.engine.pending().isEmpty)
        // The lost connection was closed, not left to end by itself (a child still running, a
        // half-open socket).
        let deadline = ContinuousClock.now + .seconds(5)
        while !scripted.engine.wasClosed, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(scripted.engine.wasClosed)
        await scripted.client.close()
    }

    /// Before, a call waiting for the reconnect waited for all of it (here 5 s) before it saw
    /// that its task was cancelled.
    @Test func cancellingACallThatWaitsForTheReconnectEndsItAtOnce() async throws {
        let scripted = ScriptedTransport()
        let transport = GatedTransport(scripted)
        let client = try await ChatClient(transport: transport, requestTimeout: nil)
        transport.nextDelay.withLock { $0 = .seconds(5) }
        try await scripted.connection(0).end()
        let deadline = ContinuousClock.now + .seconds(5)
        while transport.connectsStarted.load(ordering: .sequentiallyConsistent) < 2 {
            guard ContinuousClock.now < deadline else { throw ScriptError("the client did not reconnect") }
            try await Task.sleep(for: .milliseconds(1))
        }
        let call = Task { try await client.listChats() }
        try await Task.sleep(for: .milliseconds(50))
        let cancelled = ContinuousClock.now
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(ContinuousClock.now - cancelled < .seconds(2))
        await client.close()
    }

    @Test func aSubscribeThatTimedOutIsUnsubscribedWhenItsAnswerComesLate() async throws {
        let transport = ScriptedTransport()
        let client = try await ChatClient(transport: transport, requestTimeout: .milliseconds(100))
        let engine = try await transport.connection(0)
        await #expect(throws: ChatfeedClientError.self) { try await client.subscribe() }
        let request = try await engine.next()
        #expect(request["method"]?.stringValue == "feed.subscribe")
        engine.push(#"{"jsonrpc":"2.0","id":\#(request["id"]!),"result":\#(subscribeResult("late", items: []))}"#)
        let unsubscribe = try await engine.next()
        #expect(unsubscribe["method"]?.stringValue == "feed.unsubscribe")
        #expect(unsubscribe["params"]?["subscription"]?.stringValue == "late")
    }

    /// Resident memory in bytes (Linux), else nil.
    static func residentBytes() -> Int? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Before the fix every buffered update held a copy of the list: +422 MiB after 300 posts on
    /// 5,000 chats (+830 MiB after these 600). Now it holds its batches: a few MiB, and the app
    /// that catches up still sees every update, ending on the engine's list. The bound is wide
    /// (256 MiB) because the whole suite runs in parallel in this process.
    @Test func anAppThatFallsBehindWithoutFlowControlBuffersWhatChangedNotTheList() async throws {
        let directory = try TemporaryDirectory()
        let client = try await ChatClient(transport: InProcessTransport(database: directory.path("feed.sqlite")))
        try await Self.makeChats(client, count: 5_000)
        let subscription = try await client.subscribe(SubscriptionOptions(maxInFlight: 0))
        _ = try await client.listChats(limit: 1)
        let before = try #require(Self.residentBytes())
        let posts = 600
        for number in 0..<posts {
            try await client.postMessage(
                chat: "c\(number * 13 % 5_000)", id: "m\(number)", sender: "x", text: "message \(number)",
                sentAt: 10_000 + Int64(number))
        }
        // Answered after every batch of the posts: they are all in the client's buffer now.
        let expected = try await client.listChats(limit: 10_000).items
        let grown = try #require(Self.residentBytes()) - before
        #expect(grown < 256 << 20, "buffering \(posts) posts' updates grew the process by \(grown >> 20) MiB")
        var seen = 0
        for try await update in subscription {
            seen += 1
            if update.chats == expected { break }
        }
        #expect(seen == 1 + 2 * posts, "the snapshot, then per post a move up and its deferred update")
        await client.close()
    }

    /// Before the fix the in-process transport threw from `init`, the child-process one started
    /// and threw `connectionLost` at the first call.
    @Test func bothTransportsFailAtInitWithTheSameErrorOnAStoreThatCannotBeOpened() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("missing-folder/feed.sqlite")
        var errors: [ChatfeedClientError] = []
        for transport: any ChatfeedTransport in [
            InProcessTransport(database: path),
            ChildProcessTransport(
                executable: URL(fileURLWithPath: BuiltExecutable.path("chatfeedd")),
                arguments: ["--database", path, "--log-level", "warning"]),
        ] {
            do {
                let client = try await ChatClient(transport: transport)
                await client.close()
                Issue.record("\(transport) started on a store it cannot open")
            } catch let error as ChatfeedClientError {
                errors.append(error)
            }
        }
        #expect(errors.count == 2)
        #expect(errors.first == errors.last, "\(errors)")
        guard case .cannotStart(let reason) = errors.first else {
            Issue.record("\(errors)")
            return
        }
        #expect(reason.contains(path))
    }

    /// A log handler that keeps what it is given.
    final class RecordingLogHandler: LogHandler, @unchecked Sendable {
        let messages = Mutex<[String]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { messages.withLock { $0.append("\(event.message)") } }
    }

    @Test func theEmbeddedEngineIsSilentByDefaultAndLogsThroughTheAppsLogger() async throws {
        let directory = try TemporaryDirectory()
        #expect(InProcessTransport(database: directory.path("a.sqlite")).logger.handler is SwiftLogNoOpLogHandler)
        let handler = RecordingLogHandler()
        let logger = Logger(label: "app", factory: { _ in handler })
        let client = try await ChatClient(transport: InProcessTransport(database: directory.path("b.sqlite"), logger: logger))
        _ = try await client.subscribe()
        await client.close()
        #expect(handler.messages.withLock { $0 }.contains("subscribed"))
    }
}

extension ClientRobustnessTests {
    /// The README says a `FeedSubscription` the app drops is unsubscribed shortly after.
    @Test func aDroppedSubscriptionIsUnsubscribedOnTheEngine() async throws {
        let directory = try TemporaryDirectory()
        let client = try await ChatClient(transport: InProcessTransport(database: directory.path("feed.sqlite")))
        _ = try await client.subscribe()
        let deadline = ContinuousClock.now + .seconds(2)
        while try await client.stats().subscriptions.count > 0 {
            guard ContinuousClock.now < deadline else {
                Issue.record("the dropped subscription is still subscribed after 2 s")
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        await client.close()
    }
}
