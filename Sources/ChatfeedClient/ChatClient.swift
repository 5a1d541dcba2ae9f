import ChatModel
import Foundation
import JSONCodec
import ListDiff
import Logging
import WireProtocol

/// A Swift client of the chatfeed engine: typed calls for every method of the protocol, and the
/// feed as an `AsyncSequence` of updates validated against a mirror (README, The Swift client).
///
/// One connection at a time, over a `ChatfeedTransport`. When the connection ends on its own (the
/// child process died, the engine was closed under it), the client opens a new one and subscribes
/// every live subscription again — with the rows it has (`known`) when the engine takes them, so
/// that the app animates what changed while it was away; else with a snapshot, surfaced as a
/// `.snapshot` update. Requests in flight at that moment fail with
/// `ChatfeedClientError.connectionLost`; later ones wait for the new connection.
///
/// Every call has a time limit (`requestTimeout`, 30 s by default): a call whose answer does not
/// come in time throws `ChatfeedClientError.timedOut`, and a call whose task is cancelled throws
/// `CancellationError` at once. Either way the request may or may not have been applied.
///
/// Call `close()` when done: the engine then commits what it has read and ends.
public actor ChatClient {
    private let transport: any ChatfeedTransport
    private let logger: Logger
    /// How long a call waits for its answer (nil: without a limit).
    public let requestTimeout: Duration?
    /// The user every per-user call acts as (the `user` param of docs/PROTOCOL.md, Users and
    /// sessions); nil: the engine's default user (`defaultUser`, `me`) — or, over a session bound
    /// to a user, that user.
    public nonisolated let user: String?
    private var connection: (any ChatfeedConnection)?
    /// Bumped per connection: lines and ends of an older connection are ignored.
    private var generation = 0
    private var readerTask: Task<Void, Never>?
    private var reconnecting: Task<Void, Never>?
    /// Calls waiting for the reconnect to finish (each ends early when its task is cancelled).
    private var reconnectWaiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    private var nextReconnectWaiter = 0
    private var closed = false
    private var failure: ChatfeedClientError?
    /// Connections that ended in a row without answering anything (a daemon that cannot start).
    private var failedConnections = 0
    private static let maxFailedConnections = 5

    private var nextRequestID: Int64 = 1
    private var pending: [Int64: PendingRequest] = [:]
    /// Subscribe requests that timed out or were cancelled: a late answer's subscription is ended.
    private var abandonedSubscribes: Set<Int64> = []

    private var subscriptions: [Int: SubscriptionRecord] = [:]
    private var handleBySubscription: [String: Int] = [:]
    private var nextHandle = 1
    /// False once the engine refused `known` (a daemon older than resume): snapshots then.
    private var engineTakesKnown = true

    private struct PendingRequest {
        var method: String
        var continuation: CheckedContinuation<JSONValue, any Error>
        /// For `feed.subscribe`: the subscription the answer installs, before any later line.
        var subscribing: Int?
        /// For `feed.subscribe`: whether it sent `known` (only then may the answer carry batches).
        var sentKnown = false
        /// Ends the request when its time limit passes.
        var timer: Task<Void, Never>?
    }

    private struct SubscriptionRecord {
        var options: SubscriptionOptions
        var continuation: AsyncThrowingStream<FeedDelivery, any Error>.Continuation
        var mirror: FeedMirror?
        /// True once a subscribe answer was installed: only such a subscription is subscribed
        /// again by the reconnect loop (a subscribe still in flight sends its own request).
        var established = false
        /// The id of the engine's subscription on the current connection; nil until a subscribe
        /// answer is installed, and again once that connection ended (the next engine may give
        /// the same id to another subscription).
        var engineSubscription: String?
        var epoch = 0
        var lastAcknowledged: Int64 = 0
    }

    /// Opens the transport's first connection; throws `ChatfeedClientError.cannotStart` when the
    /// engine cannot start (a database it cannot open, say), whatever the transport.
    ///
    /// `requestTimeout`: how long a call waits for its answer before it throws
    /// `ChatfeedClientError.timedOut` (nil: no limit). `logger` tells what the client decides on
    /// its own (a catch-up it refused and replaced with the list, say); silent by default.
    /// `user`: the user every per-user call (lists, subscriptions, per-member writes…) acts as;
    /// nil for the engine's default user.
    public init(
        transport: any ChatfeedTransport, requestTimeout: Duration? = .seconds(30),
        logger: Logger = .silent("chatfeed.client"), user: String? = nil
    ) async throws {
        self.transport = transport
        self.user = user
        self.requestTimeout = requestTimeout
        self.logger = logger
        let connection = try await transport.connect()
        adopt(connection)
    }

    /// A client over a `chatfeedd` child process on `database` (see `ChildProcessTransport`).
    public static func childProcess(
        database: String, config: String? = nil, executable: URL? = nil, user: String? = nil
    ) async throws -> ChatClient {
        try await ChatClient(
            transport: ChildProcessTransport(executable: executable, database: database, config: config), user: user)
    }

    deinit {
        readerTask?.cancel()
    }

    /// Ends every subscription's sequence and closes the connection gracefully (the engine
    /// answers what it has read). Calls after it throw `ChatfeedClientError.connectionClosed`.
    /// A reconnect under way ends too: a connection it opens after this is closed before
    /// `close()` returns.
    public func close() async {
        guard !closed else { return }
        closed = true
        for (_, record) in subscriptions { record.continuation.finish() }
        subscriptions.removeAll()
        handleBySubscription.removeAll()
        let reconnect = reconnecting
        reconnect?.cancel()
        let waiters = reconnectWaiters.values
        reconnectWaiters.removeAll()
        for waiter in waiters { waiter.resume() }  // they find the client closed
        if let connection { await connection.close() }
        await reconnect?.value
    }

    // MARK: Requests

    /// Sends a request and waits for its result; an error answer throws `ChatfeedError`. Throws
    /// `ChatfeedClientError.timedOut` after `requestTimeout`, `CancellationError` when the task is
    /// cancelled.
    func call(
        _ request: WireRequest, subscribing: Int? = nil, sentKnown: Bool = false, waitingForReconnect: Bool = true
    ) async throws -> JSONValue {
        let method = request.method.rawValue
        if waitingForReconnect { try await waitForReconnect() }
        try Task.checkCancellation()
        if closed { throw ChatfeedClientError.connectionClosed }
        if let failure { throw failure }
        guard let connection else { throw ChatfeedClientError.connectionLost("no connection") }
        let generation = generation
        let id = nextRequestID
        nextRequestID += 1
        let line = Self.line(id: id, request, user: user)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                var request = PendingRequest(
                    method: method, continuation: continuation, subscribing: subscribing, sentKnown: sentKnown)
                if let requestTimeout {
                    request.timer = Task { [weak self] in
                        guard (try? await Task.sleep(for: requestTimeout)) != nil else { return }
                        await self?.abandon(id, ChatfeedClientError.timedOut(method: method, after: requestTimeout))
                    }
                }
                pending[id] = request
                do {
                    try connection.send(line)
                } catch {
                    pending[id] = nil
                    request.timer?.cancel()
                    continuation.resume(throwing: error)
                    // A write that finds the connection gone ends it now, before its reader sees
                    // the end (which a busy machine delays): the next request waits for the
                    // reconnect instead of writing to the dead connection too. And closes it: a
                    // child still running, a half-open socket, is not left to end by itself.
                    if case ChatfeedClientError.connectionLost = error, generation == self.generation {
                        connectionEnded(generation: generation)
                        Task { await connection.close() }
                    }
                }
            }
        } onCancel: {
            Task { await self.abandon(id, CancellationError()) }
        }
    }

    /// Returns once no reconnect is under way (at once when none is); throws `CancellationError`
    /// as soon as the task is cancelled.
    private func waitForReconnect() async throws {
        guard reconnecting != nil else { return }
        let key = nextReconnectWaiter
        nextReconnectWaiter += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                reconnectWaiters[key] = waiter
            }
        } onCancel: {
            Task { await self.stopWaitingForReconnect(key) }
        }
    }

    private func stopWaitingForReconnect(_ key: Int) {
        reconnectWaiters.removeValue(forKey: key)?.resume(throwing: CancellationError())
    }

    /// Ends a request that is still waiting with `error` (its time limit passed, its task was
    /// cancelled). A subscribe's late answer then ends the engine's subscription.
    private func abandon(_ id: Int64, _ error: any Error) {
        guard let request = pending.removeValue(forKey: id) else { return }
        request.timer?.cancel()
        if request.subscribing != nil { abandonedSubscribes.insert(id) }
        request.continuation.resume(throwing: error)
    }

    /// Sends a notification (no answer is awaited; the engine logs its errors).
    private func notify(_ request: WireRequest) {
        guard let connection, !closed else { return }
        try? connection.send(Self.line(id: nil, request, user: user))
    }

    /// A request's line: the JSON-RPC envelope (`RPCMessage`) around the wire layer's params.
    private static func line(id: Int64?, _ request: WireRequest, user: String?) -> [UInt8] {
        RPCMessage.requestLine(
            id: id.map(JSONValue.integer), method: request.method.rawValue, params: request.params(actingAs: user))
    }

    // MARK: Lines from the engine

    private func adopt(_ connection: any ChatfeedConnection) {
        generation += 1
        let generation = generation
        self.connection = connection
        readerTask = Task { [weak self] in
            for await line in connection.lines {
                guard let self else { return }
                await self.receive(line, generation: generation)
            }
            await self?.connectionEnded(generation: generation)
        }
    }

    private func receive(_ line: [UInt8], generation: Int) {
        guard generation == self.generation, !line.isEmpty else { return }
        let message: RPCServerMessage
        do {
            message = try RPCServerMessage(line: line)
        } catch {
            return  // the engine writes only protocol lines; nothing to answer to
        }
        switch message {
        case .result(let id, let result):
            guard let id = id.int64Value else { return }
            guard let request = pending.removeValue(forKey: id) else {
                if abandonedSubscribes.remove(id) != nil, let subscription = FeedSubscribeResult.subscriptionID(in: result) {
                    unsubscribeEngine(subscription)
                }
                return
            }
            request.timer?.cancel()
            failedConnections = 0
            if let handle = request.subscribing {
                do {
                    try installSubscription(handle, result: result, sentKnown: request.sentKnown)
                } catch {
                    // The engine made a subscription nobody will read: end it.
                    if let refused = FeedSubscribeResult.subscriptionID(in: result) { unsubscribeEngine(refused) }
                    request.continuation.resume(throwing: error)
                    return
                }
            }
            request.continuation.resume(returning: result)
        case .error(let id, let error):
            guard let id = id.int64Value else { return }
            abandonedSubscribes.remove(id)
            guard let request = pending.removeValue(forKey: id) else { return }
            request.timer?.cancel()
            failedConnections = 0
            request.continuation.resume(throwing: ChatfeedError(error, method: request.method))
        case .notification(let method, let params):
            receiveNotification(method: method, params: params)
        }
    }

    private func receiveNotification(method: String, params: JSONValue) {
        let notification: WireFeedNotification
        do {
            guard let decoded = try WireFeedNotification(method: method, params: params) else { return }
            notification = decoded
        } catch {
            let subscription = WireFeedNotification.subscriptionID(in: params) ?? "?"
            if let handle = handleBySubscription[subscription] {
                fail(handle, FeedError.malformedNotification(subscription: subscription, reason: "\(error)"))
            }
            return
        }
        guard let handle = handleBySubscription[notification.subscription],
              var mirror = subscriptions[handle]?.mirror else { return }
        do {
            let update = try mirror.apply(notification)
            subscriptions[handle]?.mirror = mirror
            subscriptions[handle]?.continuation.yield(update)
        } catch {
            fail(handle, error)
        }
    }

    /// Ends a subscription's sequence with `error` and unsubscribes it.
    private func fail(_ handle: Int, _ error: any Error) {
        guard let record = subscriptions.removeValue(forKey: handle) else { return }
        if let subscription = record.engineSubscription { unsubscribeEngine(subscription) }
        record.continuation.finish(throwing: error)
    }

    /// Tells the engine to stop serving `subscription` (a notification: nothing waits for it).
    private func unsubscribeEngine(_ subscription: String) {
        handleBySubscription[subscription] = nil
        notify(.unsubscribe(FeedUnsubscribeParams(subscription: subscription)))
    }

    // MARK: Restart

    private func connectionEnded(generation: Int) {
        guard generation == self.generation else { return }
        // Ended once: its reader's end after a failed write, and any line it still reads, are
        // ignored (`adopt` moves the generation on again for the next connection).
        self.generation += 1
        let reason = connection?.endReason ?? "the connection ended"
        connection = nil
        let lost: ChatfeedClientError = closed ? .connectionClosed : .connectionLost(reason)
        for (_, request) in pending {
            request.timer?.cancel()
            request.continuation.resume(throwing: lost)
        }
        pending.removeAll()
        abandonedSubscribes.removeAll()
        handleBySubscription.removeAll()
        for handle in subscriptions.keys { subscriptions[handle]?.engineSubscription = nil }
        guard !closed else { return }
        failedConnections += 1
        reconnectCount += 1
        let number = reconnectCount
        reconnecting = Task { await self.reconnect(after: reason, number: number) }
    }

    private var reconnectCount = 0

    private func reconnect(after reason: String, number: Int) async {
        defer {
            if number == reconnectCount {
                reconnecting = nil
                let waiters = reconnectWaiters.values
                reconnectWaiters.removeAll()
                for waiter in waiters { waiter.resume() }
            }
        }
        var lastError = reason
        if failedConnections <= Self.maxFailedConnections {
            let policy = transport.reconnectPolicy
            for attempt in policy.delays.indices {
                let wait = policy.delay(beforeAttempt: attempt, random: Double.random(in: 0..<1))
                try? await Task.sleep(for: wait + .milliseconds(100 * (failedConnections - 1)))
                if closed || Task.isCancelled { return }
                do {
                    let connection = try await transport.connect()
                    // Closed (or cancelled by close()) while connecting: nobody will use it.
                    if closed || Task.isCancelled {
                        await connection.close()
                        return
                    }
                    adopt(connection)
                    lastError = ""
                    break
                } catch {
                    lastError = "\(error)"
                }
            }
        }
        guard lastError.isEmpty else {
            let failure = ChatfeedClientError.reconnectFailed(
                failedConnections > Self.maxFailedConnections
                    ? "it ended \(failedConnections) times in a row without answering: \(reason)" : lastError)
            self.failure = failure
            for handle in Array(subscriptions.keys) { fail(handle, FeedError.resubscribeFailed(reason: "\(failure)")) }
            return
        }
        // Only the subscriptions that were subscribed on the lost connection: one whose first
        // subscribe is still waiting for this connection sends its own.
        for handle in subscriptions.keys.sorted() {
            guard subscriptions[handle]?.established == true else { continue }
            subscriptions[handle]?.epoch += 1
            subscriptions[handle]?.lastAcknowledged = 0
            do {
                try await sendSubscribe(handle, waitingForReconnect: false)
            } catch ChatfeedClientError.connectionLost {
                return  // the new connection ended too: the next reconnect subscribes again
            } catch {
                fail(handle, FeedError.resubscribeFailed(reason: "\(error)"))
            }
        }
    }

    // MARK: Subscriptions

    /// Subscribes to the feed. The sequence's first update is the list (`.snapshot`); then one
    /// update per notification, each acknowledged as `acknowledgement` says. It throws a
    /// `FeedError` when a notification does not fit the mirror, and finishes when the
    /// subscription is cancelled or the client closed.
    ///
    /// `resumingFrom`: the rows the app already shows (persisted at its last run, say), in their
    /// order. The engine answers with the batches that take them to the current list, and the
    /// first update is `.batches` with seq 0 (animate it) — or, when the reset rule or an engine
    /// without resume prefers the list, a `.snapshot` (so do more than 10,000 rows). A row whose id
    /// came before is dropped.
    ///
    /// `acknowledgement`: `.onNext` (the default) acknowledges an update when the app asks for
    /// the next one; `.manual` leaves it to `FeedSubscription.acknowledge(_:)`.
    public func subscribe(
        _ options: SubscriptionOptions = SubscriptionOptions(), resumingFrom rows: [Chat]? = nil,
        acknowledgement: AcknowledgementMode = .onNext
    ) async throws -> FeedSubscription {
        let handle = nextHandle
        nextHandle += 1
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: FeedDelivery.self)
        var record = SubscriptionRecord(options: options, continuation: continuation)
        var initialRows: [Chat] = []
        if let rows {
            var seen = Set<String>()
            initialRows = rows.filter { seen.insert($0.id).inserted }
            record.mirror = FeedMirror(subscription: "", chats: initialRows, epoch: 0)
        }
        subscriptions[handle] = record
        continuation.onTermination = { [weak self] termination in
            if case .cancelled = termination { Task { await self?.unsubscribe(handle) } }
        }
        do {
            try await sendSubscribe(handle)
        } catch {
            subscriptions[handle] = nil
            continuation.finish()
            throw error
        }
        return FeedSubscription(
            client: self, handle: handle, deliveries: stream, initialRows: initialRows, acknowledgement: acknowledgement)
    }

    /// `feed.subscribe` for a subscription: with `known` from its mirror (when the engine takes
    /// it), else plain. A catch-up whose batches do not fit the rows is refused (the engine's
    /// subscription is ended) and replaced by a plain subscribe: the app reloads the list.
    private func sendSubscribe(_ handle: Int, waitingForReconnect: Bool = true) async throws {
        guard let record = subscriptions[handle] else { return }
        let subscribe = FeedSubscribeParams(
            view: ChatListView(list: record.options.list, unreadOnly: record.options.unreadOnly),
            limit: record.options.limit, maxInFlight: record.options.maxInFlight)
        if engineTakesKnown, let mirror = record.mirror, mirror.chats.count <= Self.maxKnownRows {
            var resume = subscribe
            resume.known = mirror.chats.map { KnownRow(id: $0.id, revision: $0.revision) }
            do {
                _ = try await call(
                    .subscribe(resume), subscribing: handle, sentKnown: true, waitingForReconnect: waitingForReconnect)
                return
            } catch let error as ChatfeedError where error.code == .invalidParams && error.field == "known" {
                engineTakesKnown = false
            } catch let error as FeedError {
                logger.warning("refused the engine's catch-up; subscribing to the list instead", metadata: [
                    "error": "\(error)", "rows": "\(mirror.chats.count)",
                ])
            }
        }
        _ = try await call(.subscribe(subscribe), subscribing: handle, waitingForReconnect: waitingForReconnect)
    }

    /// The most rows a subscribe sends as `known` (the engine's limit).
    private static let maxKnownRows = 10_000

    /// Installs a subscribe answer: its list (a snapshot update) or, when it answers `known`, its
    /// batches applied to the mirror (an animated update). Throws, installing nothing, when the
    /// answer is unreadable or its batches do not fit the mirror (`FeedError`).
    private func installSubscription(_ handle: Int, result: JSONValue, sentKnown: Bool) throws {
        guard var record = subscriptions[handle] else {
            // Cancelled while the subscribe was in flight.
            if let subscription = FeedSubscribeResult.subscriptionID(in: result) { unsubscribeEngine(subscription) }
            return
        }
        let answer: FeedSubscribeResult
        do {
            answer = try FeedSubscribeResult(jsonValue: result)
        } catch {
            throw ChatfeedClientError.malformedResponse(method: WireMethod.feedSubscribe.rawValue, reason: "\(error)")
        }
        let update: FeedDelivery
        switch answer.content {
        case .batches(let batches):
            guard sentKnown, var mirror = record.mirror else {
                throw ChatfeedClientError.malformedResponse(
                    method: WireMethod.feedSubscribe.rawValue, reason: "batches answer a subscribe that sent no rows")
            }
            update = try mirror.resume(
                subscription: answer.subscription, epoch: record.epoch, batches: batches, count: answer.count,
                total: answer.total, unread: answer.unread)
            record.mirror = mirror
        case .items(let chats):
            let mirror = FeedMirror(subscription: answer.subscription, chats: chats, epoch: record.epoch)
            update = mirror.snapshot(total: answer.total, unread: answer.unread)
            record.mirror = mirror
        }
        record.engineSubscription = answer.subscription
        record.established = true
        subscriptions[handle] = record
        handleBySubscription[answer.subscription] = handle
        record.continuation.yield(update)
    }

    /// Acknowledges `update` (and every earlier one) of a subscription, once.
    func acknowledge(_ handle: Int, _ update: FeedUpdate) {
        guard let record = subscriptions[handle], record.epoch == update.epoch, update.seq > record.lastAcknowledged,
              let subscription = record.engineSubscription else { return }
        subscriptions[handle]?.lastAcknowledged = update.seq
        notify(.ack(FeedAckParams(subscription: subscription, seq: update.seq)))
    }

    /// Ends a subscription: its sequence finishes, the engine stops sending to it.
    func unsubscribe(_ handle: Int) async {
        guard let record = subscriptions.removeValue(forKey: handle) else { return }
        record.continuation.finish()
        guard let subscription = record.engineSubscription else { return }
        handleBySubscription[subscription] = nil
        _ = try? await call(.unsubscribe(FeedUnsubscribeParams(subscription: subscription)))
    }
}
