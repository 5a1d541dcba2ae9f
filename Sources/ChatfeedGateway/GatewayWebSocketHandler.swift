import ChatfeedEngine
import NIOCore
import NIOWebSocket

/// Serves one upgraded WebSocket on its channel's event loop, with no task of its own: each text
/// message in is one JSON-RPC request line for the connection's engine session, each line of the
/// session's output one text frame out (docs/GATEWAY.md).
///
/// The last handler of the pipeline, after NIOWebSocket's frame decoder (frames over
/// `maxLineBytes` are closed with 1009 there, by `WebSocketProtocolErrorHandler`) and
/// `GatewayHeartbeat` (which pings and sees every frame first). It handles:
/// - text messages, whole or fragmented (continuation frames up to `maxLineBytes` in all; control
///   frames may come between them), valid UTF-8 or closed with 1007; a binary frame is closed
///   with 1003, a frame out of sequence or of a reserved opcode or with reserved bits with 1002;
/// - ping → pong; the close handshake: a client's close is answered and the socket closed; a
///   close the gateway sends waits up to 5 s for the client's answer;
/// - flow control (docs/GATEWAY.md, Flow control): a request the engine's queue for the session has no room for
///   waits here, and the socket is not read (the pipeline's `read()` is held back) until the
///   engine makes room, so TCP pushes back on the client; the output is written while the channel
///   is writable and resumed when it is again, and lines the channel has not taken are the
///   session's unread output, which the engine bounds (`GatewayOutput`);
/// - the end of the session (a shutdown, the engine stopping): the lines are written, then the
///   WebSocket closes with 1012.
final class GatewayWebSocketHandler: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let core: GatewayCore
    private let admission: Admission
    private var connection: GatewayConnection?
    private var id = 0
    private var context: ChannelHandlerContext?
    /// Called when the engine's queue for the session has room again (set while open).
    private var whenRoom: (@Sendable () -> Void)?

    /// A text message being received in fragments.
    private var message: ByteBuffer?
    /// Request lines the engine's queue had no room for, in order: the socket is not read while
    /// there are any.
    private var waiting: [[UInt8]] = []
    /// The pipeline asked for a read while requests were waiting.
    private var readWithheld = false
    /// The session's input ended: further requests are dropped.
    private var inputEnded = false

    /// Lines taken from the output and not yet written (whole lines, one buffer per flush).
    private var outbox: [ByteBuffer] = []
    private var outboxHead = 0
    /// The session ended: after the outbox, the WebSocket closes with 1012.
    private var outputFinished = false

    /// A close frame was sent: no data frame follows; the socket closes on the client's answer
    /// or after `closeTimeout`.
    private var closing = false
    private var closeTimer: Scheduled<Void>?
    /// Why the connection closed, for its log line (the first reason found).
    private var reason: String?
    private var ended = false

    /// How long a close the gateway sent waits for the client's answer.
    static let closeTimeout = TimeAmount.seconds(5)

    init(core: GatewayCore, admission: Admission) {
        self.core = core
        self.admission = admission
    }

    // MARK: Open and close

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        let output = GatewayOutput(limitBytes: core.engine.options.sessionOutputLimitBytes)
        output.attach(wake: { eventLoop.execute { handler.value.outputAvailable() } })
        whenRoom = { eventLoop.execute { handler.value.inputRoom() } }
        let (id, connection) = core.open(admission, channel: context.channel, output: output)
        self.id = id
        self.connection = connection
        if !context.channel.isActive { end(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end(context: context)
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(context: context)
        context.fireChannelInactive()
    }

    /// The socket closed: the session ends (what it sent is still handled, its answers dropped),
    /// the output lets go of the engine, and the connection's log line says why.
    private func end(context: ChannelHandlerContext) {
        guard !ended, let connection else { return }
        ended = true
        closeTimer?.cancel()
        closeTimer = nil
        whenRoom = nil
        connection.output.detach()
        connection.session.close()
        outbox = []
        waiting = []
        message = nil
        let why = reason ?? (connection.wasCut ? "cut after the shutdown grace" : "closed by the client (no close frame)")
        core.closed(id, connection, reason: why)
    }

    /// Sends a close frame with `code` and `text`; the session ends, and the socket closes when
    /// the client answers or after `closeTimeout`.
    private func close(context: ChannelHandlerContext, code: WebSocketErrorCode, text: String, reason: String) {
        if self.reason == nil { self.reason = reason }
        guard !closing else { return }
        closing = true
        stopServing()
        context.writeAndFlush(wrapOutboundOut(Self.closeFrame(code, text, allocator: context.channel.allocator)), promise: nil)
        let channel = context.channel
        closeTimer = context.eventLoop.scheduleTask(in: Self.closeTimeout) { channel.close(promise: nil) }
    }

    /// No more data frames either way: the session's input ends, its output is dropped.
    private func stopServing() {
        inputEnded = true
        waiting = []
        message = nil
        outbox = []
        outboxHead = 0
        connection?.output.detach()
        connection?.session.close()
        // The client's close (or its answer to the gateway's) must still be read.
        if readWithheld, let context {
            readWithheld = false
            context.read()
        }
    }

    private static func closeFrame(_ code: WebSocketErrorCode, _ text: String, allocator: ByteBufferAllocator) -> WebSocketFrame {
        var data = allocator.buffer(capacity: 2 + text.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(text)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
    }

    // MARK: Frames in

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary, .continuation:
            guard !closing else { return }
            guard frame.reservedBits.isEmpty else {
                return close(context: context, code: .protocolError, text: "reserved bits set", reason: "a frame with reserved bits (1002)")
            }
            received(frame, context: context)
        case .ping:
            guard frame.fin else {
                return close(context: context, code: .protocolError, text: "a fragmented ping", reason: "a fragmented ping (1002)")
            }
            guard !closing else { return }
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .pong:
            break  // the heartbeat saw it
        case .connectionClose:
            receivedClose(frame, context: context)
        default:
            close(context: context, code: .protocolError, text: "reserved opcode", reason: "a frame of a reserved opcode (1002)")
        }
    }

    private func received(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        switch frame.opcode {
        case .text:
            guard message == nil else {
                return close(context: context, code: .protocolError, text: "a text frame inside a fragmented message", reason: "a frame out of sequence (1002)")
            }
            if frame.fin {
                deliver(frame.unmaskedData, context: context)
            } else {
                message = frame.unmaskedData
            }
        case .continuation:
            guard var text = message else {
                return close(context: context, code: .protocolError, text: "a continuation frame without a message", reason: "a frame out of sequence (1002)")
            }
            message = nil
            var data = frame.unmaskedData
            guard text.readableBytes + data.readableBytes <= core.maxFrameBytes else {
                return close(
                    context: context, code: .messageTooLarge, text: "a message over \(core.maxFrameBytes) bytes",
                    reason: "a message over maxLineBytes (1009)")
            }
            text.writeBuffer(&data)
            if frame.fin { deliver(text, context: context) } else { message = text }
        default:
            close(
                context: context, code: .unacceptableData, text: "binary frames are not accepted: one JSON-RPC message per text frame",
                reason: "a binary frame (1003)")
        }
    }

    /// One whole text message: one request line for the engine.
    private func deliver(_ text: ByteBuffer, context: ChannelHandlerContext) {
        var line = Array(text.readableBytesView)
        guard String(validating: line, as: UTF8.self) != nil else {
            return close(context: context, code: .dataInconsistentWithMessage, text: "a text message that is not UTF-8", reason: "a text message that is not UTF-8 (1007)")
        }
        // JSON allows newlines as whitespace; the engine reads lines.
        for index in line.indices where line[index] == 0x0A || line[index] == 0x0D { line[index] = 0x20 }
        line.append(0x0A)
        guard let connection, !inputEnded else { return }
        connection.traffic.received(line)
        if !waiting.isEmpty {
            waiting.append(line)
            return
        }
        offer(line, to: connection)
    }

    private func offer(_ line: [UInt8], to connection: GatewayConnection) {
        guard let whenRoom else { return }
        switch connection.session.trySend(line, whenRoom: whenRoom) {
        case .sent: break
        case .full: waiting.append(line)
        case .ended: inputEnded = true
        }
    }

    /// The engine's queue for the session has room: the waiting requests go, and the socket is
    /// read again once they all went.
    private func inputRoom() {
        guard let context, let connection, let whenRoom, !ended else { return }
        while !waiting.isEmpty, !inputEnded {
            switch connection.session.trySend(waiting[0], whenRoom: whenRoom) {
            case .sent: waiting.removeFirst()
            case .full: return
            case .ended: inputEnded = true
            }
        }
        waiting = []
        if readWithheld {
            readWithheld = false
            context.read()
        }
    }

    func read(context: ChannelHandlerContext) {
        guard waiting.isEmpty else {
            readWithheld = true
            return
        }
        context.read()
    }

    private func receivedClose(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        if closing {
            // The client's answer to the gateway's close.
            context.close(promise: nil)
            return
        }
        if reason == nil { reason = "closed by the client" }
        closing = true
        stopServing()
        let channel = context.channel
        let answer = Self.closeFrame(Self.answerCode(to: frame), "", allocator: context.channel.allocator)
        context.writeAndFlush(wrapOutboundOut(answer)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// The code that answers a client's close (RFC 6455 §7.4): normal closure, or 1002 for a
    /// malformed close or a code an endpoint may not send.
    private static func answerCode(to frame: WebSocketFrame) -> WebSocketErrorCode {
        guard frame.reservedBits.isEmpty else { return .protocolError }
        var data = frame.unmaskedData
        guard data.readableBytes > 0 else { return .normalClosure }
        guard let code = data.readWebSocketErrorCode() else { return .protocolError }
        if case .unknown(let number) = code, number < 3000 || number > 4999 { return .protocolError }
        if data.readableBytes > 0, String(validating: data.readableBytesView, as: UTF8.self) == nil { return .protocolError }
        return .normalClosure
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            // The client shut its side of the TCP connection (FIN) without a close frame: it
            // sends nothing more, and a WebSocket does not go on half-open. Closed now; else it
            // held its connection slot, session and subscriptions until a ping failed.
            if reason == nil { reason = "closed by the client (no close frame)" }
            context.close(promise: nil)
            return
        }
        if event is GatewayHeartbeat.TimedOut {
            if reason == nil { reason = "no pong within two ping intervals (1001)" }
            closing = true
            stopServing()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOWebSocketError {
            // WebSocketProtocolErrorHandler sent the close and closes the socket.
            if reason == nil {
                reason = error == .invalidFrameLength ? "a frame over maxLineBytes (1009)" : "a WebSocket protocol error (\(error))"
            }
            closing = true
            stopServing()
            return
        }
        if reason == nil { reason = "the socket failed (the client is gone): \(error)" }
        context.close(promise: nil)
    }

    // MARK: Lines out

    /// The engine flushed lines (or ended the session): they join the outbox and are written.
    private func outputAvailable() {
        guard let context, let connection, !ended, !closing else { return }
        let (chunks, finished) = connection.output.take()
        outbox.append(contentsOf: chunks)
        if finished { outputFinished = true }
        writeOutput(context: context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, !ended, !closing { writeOutput(context: context) }
        context.fireChannelWritabilityChanged()
    }

    /// Writes the outbox's lines as text frames while the channel is writable, flushes once, and
    /// closes with 1012 after the last line of an ended session.
    /// - Complexity: O(bytes written).
    private func writeOutput(context: ChannelHandlerContext) {
        guard let connection else { return }
        var bytes = 0
        while outboxHead < outbox.count, context.channel.isWritable {
            var chunk = outbox[outboxHead]
            while context.channel.isWritable, let newline = chunk.readableBytesView.firstIndex(of: 0x0A) {
                let length = newline - chunk.readerIndex
                let line = chunk.readSlice(length: length)!
                chunk.moveReaderIndex(forwardBy: 1)
                bytes += length + 1
                let isNotification = line.withUnsafeReadableBytes { connection.traffic.sent($0) }
                context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: line)), promise: nil)
                if isNotification { connection.traffic.notificationWritten() }
            }
            outbox[outboxHead] = chunk
            if chunk.readableBytes == 0 { outboxHead += 1 }
        }
        if outboxHead == outbox.count {
            outbox = []
            outboxHead = 0
        } else if outboxHead >= 64, outboxHead * 2 >= outbox.count {
            outbox.removeFirst(outboxHead)
            outboxHead = 0
        }
        if bytes > 0 {
            context.flush()
            connection.output.written(bytes)
        }
        if outbox.isEmpty, outputFinished {
            // The engine ended the session (a shutdown or the engine stopping): the server closes.
            let text = connection.isShuttingDown ? "the server is restarting" : "the server is stopping"
            close(context: context, code: GatewayConnection.restartCode, text: text, reason: "\(text) (1012)")
        }
    }
}
