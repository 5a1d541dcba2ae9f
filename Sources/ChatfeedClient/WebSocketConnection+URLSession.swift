import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the URLSession path of `WebSocketTransport` needs of a WebSocket task: a protocol so
/// that its logic (the open handshake, the two pumps, the end) is tested on Linux, where
/// Foundation's `URLSessionWebSocketTask` compiles but libcurl has no WebSocket support.
protocol WebSocketTaskChannel: AnyObject, Sendable {
    /// Starts the connection (the HTTP upgrade).
    func resume()
    /// Sends a ping; `answered` is called once with nil when the pong arrives, or with the
    /// error that ended the connection (a refused upgrade, a failure) first.
    func sendPing(_ answered: @escaping @Sendable ((any Error)?) -> Void)
    func sendText(_ text: String) async throws
    /// The next text frame; nil for a binary frame (none is expected from a gateway).
    func receiveText() async throws -> String?
    /// Closes with `code` (1000: normal; 1001: going away).
    func cancel(code: Int)
    /// The close code the connection ended with, 0 while open.
    var closeCodeNumber: Int { get }
}

/// `URLSessionWebSocketTask` as a `WebSocketTaskChannel`.
final class URLSessionTaskChannel: WebSocketTaskChannel, @unchecked Sendable {
    private let task: URLSessionWebSocketTask

    /// A task to `url` with the token in `Authorization` (not yet resumed).
    init(url: URL, token: String, maximumMessageSize: Int) {
        var request = URLRequest(url: url)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        task = URLSession.shared.webSocketTask(with: request)
        task.maximumMessageSize = maximumMessageSize
    }

    func resume() { task.resume() }

    func sendPing(_ answered: @escaping @Sendable ((any Error)?) -> Void) {
        task.sendPing(pongReceiveHandler: answered)
    }

    func sendText(_ text: String) async throws { try await task.send(.string(text)) }

    func receiveText() async throws -> String? {
        switch try await task.receive() {
        case .string(let text): return text
        default: return nil
        }
    }

    func cancel(code: Int) {
        task.cancel(with: URLSessionWebSocketTask.CloseCode(rawValue: code) ?? .normalClosure, reason: nil)
    }

    var closeCodeNumber: Int { task.closeCode.rawValue }
}

extension WebSocketConnection {
    /// Opens `channel`: the upgrade is known to have succeeded when the first ping is answered
    /// (a gateway sends nothing before the client's first request, so waiting for a first
    /// message would wait for good); a refused upgrade fails the ping, and a gateway that does
    /// not answer within `handshakeTimeout` fails the attempt. Then one task sends the lines in
    /// order and one receives, until the WebSocket closes.
    static func open(
        channel: some WebSocketTaskChannel, url: String, handshakeTimeout: Duration
    ) async throws -> WebSocketConnection {
        let connection = WebSocketConnection()
        let opened = OpenedSignal()
        channel.resume()
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            opened.set(waiter)
            let timer = Task {
                guard (try? await Task.sleep(for: handshakeTimeout)) != nil, let waiter = opened.take() else { return }
                channel.cancel(code: 1001)
                waiter.resume(throwing: ChatfeedClientError.cannotStart(
                    "the gateway at \(url) did not answer the WebSocket upgrade within \(handshakeTimeout)"))
            }
            channel.sendPing { error in
                timer.cancel()
                guard let waiter = opened.take() else { return }
                if let error {
                    channel.cancel(code: 1001)
                    waiter.resume(throwing: ChatfeedClientError.cannotStart("cannot open \(url): \(error.localizedDescription)"))
                } else {
                    waiter.resume()
                }
            }
        }
        let outgoingLines = connection.outgoingLines
        Task {
            for await line in outgoingLines {
                do { try await channel.sendText(frameText(line)) } catch { break }
            }
            // Closed by the client (or the connection failed): the server answers what it had.
            channel.cancel(code: 1000)
        }
        Task {
            while true {
                do {
                    if let text = try await channel.receiveText() { connection.received(text) }
                } catch {
                    connection.ended("the WebSocket closed (\(channel.closeCodeNumber))")
                    return
                }
            }
        }
        return connection
    }
}
