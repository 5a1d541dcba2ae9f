import Logging
import NIOCore
import NIOWebSocket

/// The gateway's heartbeat on one WebSocket (docs/GATEWAY.md, Close codes): a ping every
/// `pingIntervalSeconds`; a ping sent at time s must be answered by s + 2 × the interval, else
/// the connection is closed with 1001 and a log line says why.
///
/// Any frame the client sends answers every ping sent before it (a pong does; so does a request
/// or a ping of its own: each shows the client reads and writes), so a client that stops reading
/// its socket for less than two intervals stays connected and catches up. While the gateway
/// itself does not read the socket (flow control holds the session's requests until its output
/// drains), the clock stops: a pong the gateway has not read yet is not the client's fault.
///
/// A channel handler between the WebSocket frame decoder and the connection's handler
/// (`GatewayWebSocketHandler`), on the channel's event loop: it sees each frame as it is read
/// from the socket, before the session's handler, and writes its pings into the pipeline directly, so that a ping never waits
/// behind the session's unsent output (the socket's own buffer is the only queue it waits in).
/// (hummingbird-websocket's `autoPing`, used before, closed a connection one interval after an
/// unanswered ping, and saw a pong only when the session's reader read.)
final class GatewayHeartbeat: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// The close code of a connection whose pings went unanswered.
    static let timeoutCode = WebSocketErrorCode.goingAway

    /// The event the heartbeat fires (inbound, to the handlers after it) before it closes a
    /// connection whose pings went unanswered.
    struct TimedOut: Sendable {}

    private let interval: TimeAmount
    private let logger: Logger
    /// The connection's user and address, for the log line (kept apart from the logger: a
    /// logger with metadata of its own costs each idle connection an allocation).
    private let admission: Admission
    private var timer: Scheduled<Void>?
    /// When the last bytes came from the client (or the gateway last resumed reading).
    private var lastHeard = NIODeadline.now()
    /// When the oldest ping not yet followed by anything from the client was sent.
    private var oldestUnanswered: NIODeadline?
    /// The channel read, and the pipeline has not asked for the next read (the session's
    /// reader is held): the gateway is not reading the socket.
    private var readHeld = false

    /// - Parameter interval: the time between pings (`GatewayOptions.pingIntervalSeconds`).
    init(interval: TimeAmount, logger: Logger, admission: Admission) {
        self.interval = interval
        self.logger = logger
        self.admission = admission
    }

    func handlerAdded(context: ChannelHandlerContext) {
        lastHeard = .now()
        scheduleTick(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastHeard = .now()
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // The channel asks for its next read right after this unless a handler after this one
        // (the connection's, while the engine has no room for the session's requests) holds it.
        readHeld = true
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if readHeld {
            readHeld = false
            lastHeard = .now()
        }
        context.read()
    }

    private func scheduleTick(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let context = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.value.eventLoop.scheduleTask(in: interval) {
            handler.value.tick(context: context.value)
        }
    }

    /// Closes the connection if its oldest unanswered ping is two intervals old, else sends a
    /// ping.
    /// - Complexity: O(1).
    private func tick(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        let now = NIODeadline.now()
        if let sent = oldestUnanswered, lastHeard >= sent { oldestUnanswered = nil }
        if let sent = oldestUnanswered, !readHeld, now - sent >= interval * 2 {
            logger.info("closing a connection: no pong (or any frame) within two ping intervals (1001)", metadata: [
                "waitedMilliseconds": "\((now - sent).nanoseconds / 1_000_000)",
                "user": "\(admission.user)", "address": "\(admission.address)",
            ])
            var reason = context.channel.allocator.buffer(capacity: 64)
            reason.write(webSocketErrorCode: Self.timeoutCode)
            reason.writeString("no pong within two ping intervals")
            let close = WebSocketFrame(fin: true, opcode: .connectionClose, data: reason)
            context.fireUserInboundEventTriggered(TimedOut())
            context.writeAndFlush(wrapOutboundOut(close), promise: nil)
            context.close(promise: nil)
            return
        }
        var payload = context.channel.allocator.buffer(capacity: 8)
        payload.writeInteger(UInt64(truncatingIfNeeded: now.uptimeNanoseconds))
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: payload)), promise: nil)
        if oldestUnanswered == nil { oldestUnanswered = now }
        scheduleTick(context: context)
    }
}
