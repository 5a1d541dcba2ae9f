import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket
import ServiceLifecycle
import Synchronization

/// A connection's HTTP/1 channel with the gateway's WebSocket upgrade (`GET /v1/feed`). It is
/// modelled on hummingbird-websocket's upgrade channel, with one difference: a refused upgrade gets its own
/// status and one-line plain-text reason (401, 503, 404), where the library answers every refusal
/// with an empty 400.
struct GatewayChannel: ServerChildChannel, HTTPChannelHandler {
    enum UpgradeResult: Sendable {
        /// Upgraded: `GatewayWebSocketHandler` serves it on its event loop.
        case webSocket
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, GatewayRefusal)
    }

    struct Value: ServerChildChannelValue {
        let upgradeResult: EventLoopFuture<UpgradeResult>
        let channel: any Channel
        /// What the upgrade decided: an admission's slot is given back when `handle` ends,
        /// whether or not the connection was served.
        let decision: UpgradeDecision
    }

    let responder: HTTPChannelHandler.Responder
    let core: GatewayCore

    /// A connection's reads start in a buffer of 512 bytes, which grows (up to 64 KiB) while
    /// reads fill it and shrinks when they do not. The channel keeps its last buffer for the next
    /// read: with NIO's default (2,048 bytes to start) that was 2.1 KB of each idle connection's
    /// 12 (Benchmarks/Results/gateway.md, 2026-12-07).
    static let receiveAllocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65_536)

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.receiveAllocator)
            // What the upgrade decided, for the handlers that build the result.
            let decision = UpgradeDecision()
            // A connection admitted and then closed gives its slot back, even when its upgrade
            // never completes (the close may come before `handle` learns the upgrade's outcome).
            channel.closeFuture.whenComplete { _ in
                if case .success(let admission)? = decision.result { admission.slot.release() }
            }
            let core = self.core
            let upgrader = NIOTypedWebSocketServerUpgrader<UpgradeResult>(
                maxFrameSize: core.maxFrameBytes,
                shouldUpgrade: { channel, head in
                    let promise = channel.eventLoop.makePromise(of: HTTPHeaders?.self)
                    Task(executorPreference: core.taskExecutor) {
                        promise.succeed(await Self.decide(channel: channel, head: head, core: core, decision: decision))
                    }
                    return promise.futureResult
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        guard case .success(let admission) = decision.result else {
                            preconditionFailure("an upgrade without an admission")
                        }
                        // The heartbeat sees each frame before the connection's handler does.
                        try channel.pipeline.syncOperations.addHandlers(
                            GatewayHeartbeat(interval: core.options.pingInterval, logger: logger, admission: admission),
                            GatewayWebSocketHandler(core: core, admission: admission))
                        return UpgradeResult.webSocket
                    }
                }
            )
            let configuration = NIOTypedHTTPServerUpgradeConfiguration(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
                        let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                        if case .failure(let refusal) = decision.result {
                            return UpgradeResult.refused(http, refusal)
                        }
                        return UpgradeResult.notUpgraded(http)
                    }
                }
            )
            var pipeline = NIOUpgradableHTTPServerPipelineConfiguration<UpgradeResult>(upgradeConfiguration: configuration)
            pipeline.enablePipelining = false
            pipeline.enableErrorHandling = false
            pipeline.enableResponseHeaderValidation = false
            let result = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: pipeline)
            // A client that has not sent its whole request within two ping intervals is gone (or
            // holding a descriptor on purpose): closed, as a silent WebSocket is.
            let requestDeadline = channel.eventLoop.scheduleTask(in: core.options.pingInterval * 2) {
                channel.close(promise: nil)
            }
            result.whenComplete { _ in requestDeadline.cancel() }
            return Value(upgradeResult: result, channel: channel, decision: decision)
        }
    }

    /// Admits or refuses an upgrade (`core.admit`), notes the outcome in `decision`, and returns
    /// the upgrade's extra headers (nil: no upgrade).
    private static func decide(
        channel: any Channel, head: HTTPRequestHead, core: GatewayCore, decision: UpgradeDecision
    ) async -> HTTPHeaders? {
        let address = channel.remoteAddress.map { "\($0)" } ?? "?"
        let result = await core.admit(uri: head.uri, headers: head.headers, address: address)
        decision.set(result)
        guard case .success(let admission) = result else { return nil }
        // The client left while its token was checked: no upgrade, no slot.
        guard channel.isActive else {
            admission.slot.release()
            return nil
        }
        return HTTPHeaders()
    }

    func handle(value: Value, logger: Logger) async {
        // A WebSocket is served on its event loop, with no task: its slot is given back when its
        // socket closes. A connection admitted but never served (gone before or during its 101)
        // gives its slot back here.
        var served = false
        defer {
            if !served, case .success(let admission)? = value.decision.result { admission.slot.release() }
        }
        do {
            // A connection still sending its request when the server stops is closed: its upgrade
            // fails, and `handle` ends (else the server's shutdown waited for that client).
            let upgrade = try await withGracefulShutdownHandler {
                try await value.upgradeResult.get()
            } onGracefulShutdown: { [channel = value.channel] in
                channel.close(promise: nil)
            }
            switch upgrade {
            case .notUpgraded(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .refused(let http, let refusal):
                await Self.write(refusal, to: http)
            case .webSocket:
                served = true
            }
        } catch {
            logger.debug("connection ended before its upgrade was decided", metadata: ["error": "\(error)"])
        }
    }

    /// The refusal as an HTTP response: its status and one line of plain text, then the
    /// connection closes.
    private static func write(_ refusal: GatewayRefusal, to http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>) async {
        try? await http.executeThenClose { _, outbound in
            let body = ByteBuffer(string: refusal.reason + "\n")
            let head = HTTPResponse(status: refusal.status, headerFields: [
                .connection: "close", .contentType: "text/plain; charset=utf-8", .contentLength: "\(body.readableBytes)",
            ])
            try await outbound.write(contentsOf: [.head(head), .body(body), .end(nil)])
        }
    }
}

/// What a connection's upgrade decided, shared by the upgrade's handlers and `handle`.
final class UpgradeDecision: Sendable {
    private let value = Mutex<Result<Admission, GatewayRefusal>?>(nil)

    func set(_ result: Result<Admission, GatewayRefusal>) { value.withLock { $0 = result } }

    var result: Result<Admission, GatewayRefusal>? { value.withLock { $0 } }
}

/// An upgrade the gateway refused: the HTTP status and the one-line reason.
struct GatewayRefusal: Error, Sendable {
    var status: HTTPResponse.Status
    var reason: String
}
