import ChatfeedEngine
import Foundation
import NIOWebSocket
import Synchronization
import WSCore

/// One WebSocket as one engine session of its token's user: each text frame is one JSON-RPC
/// message in, each line of the session's output one text frame out.
///
/// Flow control end to end: the session's output waits in the engine's in-process output until
/// the socket takes it (a write suspends while the socket is not writable); past
/// `sessionOutputLimitBytes` of unsent output the engine holds the session's requests, its queued
/// input fills, `sendSuspending` suspends the reader, and the reader stops reading the socket, so
/// TCP pushes back on the client. No thread blocks, and no other session waits.
final class GatewayConnection: Sendable {
    private let core: GatewayCore
    let admission: Admission
    let session: InProcessSession
    /// Set by `shutDown()`: the session's end is the server's, so the close code is 1012.
    private let shuttingDown = Mutex(false)
    /// Fired by `cut()`: every task of the connection is cancelled.
    private let cutSignal: AsyncStream<Void>
    private let cutTrigger: AsyncStream<Void>.Continuation
    /// The connection's requests and lines, for the metrics.
    let traffic: GatewayTraffic

    /// The close code and reason of a connection the server ends (a shutdown, the engine stopping).
    static let restartCode = WebSocketErrorCode(codeNumber: 1012)

    init(core: GatewayCore, admission: Admission) {
        self.core = core
        self.admission = admission
        session = core.engine.openInProcessSession(identity: GatewayConnection.identity(of: admission.user))
        (cutSignal, cutTrigger) = AsyncStream.makeStream(of: Void.self)
        traffic = GatewayTraffic(metrics: core.metrics)
    }

    /// The engine identity of a gateway session of `user`.
    static func identity(of user: String) -> SessionIdentity {
        .user(user)
    }

    /// Ends the session for a shutdown: the engine answers what it received, the lines are sent,
    /// then the WebSocket closes with 1012.
    func shutDown() {
        shuttingDown.withLock { $0 = true }
        session.close()
    }

    /// Cancels the connection (after the shutdown grace).
    func cut() {
        cutTrigger.yield()
    }

    private enum Finished: Sendable {
        case reader(String)
        /// The session's lines ended (the engine ended the session).
        case writer
        /// A write to the socket failed: the client is gone.
        case writeFailed
        case timeout
        case cut
    }

    /// Serves the WebSocket until it closes; returns why it closed, for the log.
    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws -> String {
        let session = self.session
        let maxLineBytes = core.maxFrameBytes
        let traffic = self.traffic
        let result: Result<String, any Error> = await withTaskGroup(of: Result<Finished, any Error>.self) { group in
            group.addTask {
                // The reader: one message per text frame, as one line.
                do {
                    for try await message in inbound.messages(maxSize: maxLineBytes) {
                        switch message {
                        case .text(let text):
                            var line = Array(text.utf8)
                            // JSON allows newlines as whitespace; the engine reads lines.
                            for index in line.indices where line[index] == 0x0A || line[index] == 0x0D { line[index] = 0x20 }
                            line.append(0x0A)
                            traffic.received(line)
                            guard await session.sendSuspending(line) else { return .success(.reader("the session ended")) }
                        case .binary:
                            try await outbound.close(
                                .unacceptableData, reason: "binary frames are not accepted: one JSON-RPC message per text frame")
                            return .success(.reader("a binary frame (1003)"))
                        }
                    }
                    return .success(.reader("closed by the client"))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                // The writer: the session's lines, one text frame each, in order.
                for await line in session.lines {
                    let isFeed = traffic.sent(line)
                    do {
                        try await outbound.writeTextMessage(String(decoding: line, as: UTF8.self))
                        if isFeed { traffic.notificationWritten() }
                    } catch {
                        return .success(.writeFailed)
                    }
                }
                return .success(.writer)
            }
            group.addTask { [cutSignal] in
                for await _ in cutSignal { return .success(.cut) }
                return .success(.cut)
            }
            var outcome: Result<String, any Error> = .success("closed")
            switch await group.next()! {
            case .success(.writer):
                // The engine ended the session (a shutdown or the engine stopping): the server closes.
                let reason = shuttingDown.withLock { $0 } ? "the server is restarting" : "the server is stopping"
                try? await outbound.close(Self.restartCode, reason: reason)
                outcome = .success("\(reason) (1012)")
                group.addTask {
                    try? await Task.sleep(for: .seconds(5))
                    return .success(.timeout)
                }
                _ = await group.next()  // the client's close, or the timeout
            case .success(.reader(let why)):
                outcome = .success(why)
            case .success(.writeFailed):
                outcome = .success("the socket failed (the client is gone)")
            case .success(.cut):
                outcome = .success("cut after the shutdown grace")
            case .success(.timeout):
                break
            case .failure(let error):
                outcome = .failure(error)
            }
            session.close()
            group.cancelAll()
            return outcome
        }
        cutTrigger.finish()
        return try result.get()
    }
}
