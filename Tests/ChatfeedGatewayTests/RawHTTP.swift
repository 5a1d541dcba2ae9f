import Foundation

/// One HTTP/1.1 request over a plain socket, read to the end of the response (or 30 seconds): what
/// a refused upgrade answers, byte for byte.
enum RawHTTP {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    /// `GET target`, as a WebSocket upgrade when `upgrade` is true.
    static func get(port: Int, _ target: String, headers: [String: String] = [:], upgrade: Bool = false) async throws -> Response {
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        if upgrade {
            request += "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        } else {
            request += "Connection: close\r\n"
        }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let bytes = try await exchange(port: port, Array(request.utf8))
        let text = String(decoding: bytes, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { throw Malformed(text: text) }
        let lines = text[..<end.lowerBound].split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.split(separator: " ").count >= 2,
              let status = Int(statusLine.split(separator: " ")[1]) else { throw Malformed(text: text) }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, headers: fields, body: String(text[end.upperBound...]))
    }

    /// Sends a WebSocket upgrade of `target` and resets the connection at once (SO_LINGER 0),
    /// without reading: a client gone while the gateway decides its upgrade.
    static func abortUpgrade(port: Int, _ target: String, headers: [String: String] = [:]) {
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        request += "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let (socket, connected) = connectedSocket(port: port)
        if connected {
            _ = Array(request.utf8).withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        close(socket)
    }

    /// A server on a loopback port that reads one request and closes the connection without
    /// answering (FIN), as a gateway shutting down does to a request that arrives as it quiesces.
    /// Returns its port; it serves one connection.
    static func closeWithoutAnswering() throws -> Int {
        let listener = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else { close(listener); throw CannotConnect() }
        Thread {
            defer { close(listener) }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            var request: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !request.suffix(4).elementsEqual("\r\n\r\n".utf8) {
                let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                request += buffer[0..<count]
            }
            close(client)
        }.start()
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// `127.0.0.1:port` as a socket address.
    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// A TCP socket connected to `127.0.0.1:port` (blocking), and whether the connect succeeded.
    static func connectedSocket(port: Int) -> (socket: Int32, connected: Bool) {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return (socket, result == 0)
    }

    /// Upgrades `target` with `headers`, sends a (masked) ping frame carrying `payload`, and
    /// returns the first frame the gateway sends back, as its opcode and payload (nil when the
    /// connection closed or 10 seconds passed first). The URLSession client opens on that pong.
    static func ping(port: Int, _ target: String, headers: [String: String], payload: [UInt8]) async throws -> (opcode: UInt8, payload: [UInt8])? {
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        request += "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let upgrade = Array(request.utf8)
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        let frame = [0x89, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $1 ^ mask[$0 % 4] }
        return try await withCheckedThrowingContinuation { done in
            Thread {
                let (socket, connected) = connectedSocket(port: port)
                defer { close(socket) }
                guard connected else { return done.resume(throwing: CannotConnect()) }
                var timeout = timeval(tv_sec: 10, tv_usec: 0)
                setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                _ = upgrade.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                var upgraded = false
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                    if count <= 0 { return done.resume(returning: nil) }
                    received += buffer[0..<count]
                    if !upgraded {
                        let head = Array("\r\n\r\n".utf8)
                        guard let end = (0...max(0, received.count - 4)).first(where: { received[$0..<min($0 + 4, received.count)].elementsEqual(head) }) else { continue }
                        guard received.starts(with: "HTTP/1.1 101".utf8) else { return done.resume(returning: nil) }
                        received.removeFirst(end + 4)
                        upgraded = true
                        _ = frame.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
                    }
                    // A server frame is unmasked; a control frame's payload is under 126 bytes.
                    if received.count >= 2, received.count >= 2 + Int(received[1] & 0x7F) {
                        return done.resume(returning: (received[0] & 0x0F, Array(received[2..<(2 + Int(received[1] & 0x7F))])))
                    }
                }
            }.start()
        }
    }

    /// Upgrades `target` with `headers`, then shuts the socket's sending side (FIN, no close
    /// frame) and reads until the gateway closes the connection. Returns whether it did within
    /// `seconds` (false: the upgrade failed, or the connection stayed open).
    static func halfCloseAfterUpgrade(port: Int, _ target: String, headers: [String: String], seconds: Int) async throws -> Bool {
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        request += "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let upgrade = Array(request.utf8)
        return try await withCheckedThrowingContinuation { done in
            Thread {
                let (socket, connected) = connectedSocket(port: port)
                defer { close(socket) }
                guard connected else { return done.resume(throwing: CannotConnect()) }
                var timeout = timeval(tv_sec: seconds, tv_usec: 0)
                setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                _ = upgrade.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !received.starts(with: "HTTP/1.1 101".utf8) || !received.suffix(4).elementsEqual("\r\n\r\n".utf8) {
                    let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                    if count <= 0 { return done.resume(returning: false) }
                    received += buffer[0..<count]
                }
                shutdown(socket, Int32(SHUT_WR))
                // The gateway sends nothing before a request: the next recv is its close (0), or
                // the timeout (-1).
                let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                done.resume(returning: count == 0)
            }.start()
        }
    }

    struct Malformed: Error { var text: String }
    struct CannotConnect: Error {}

    private static func exchange(port: Int, _ request: [UInt8]) async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<[UInt8], any Error>) in
            Thread {
                let (socket, connected) = connectedSocket(port: port)
                defer { close(socket) }
                guard connected else { return done.resume(throwing: CannotConnect()) }
                var timeout = timeval(tv_sec: 30, tv_usec: 0)
                setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
                var response: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                    if count <= 0 { break }
                    response += buffer[0..<count]
                    // A 101 has no body and keeps the connection: its head is the whole answer.
                    if response.starts(with: "HTTP/1.1 101".utf8), response.suffix(4).elementsEqual("\r\n\r\n".utf8) { break }
                }
                done.resume(returning: response)
            }.start()
        }
    }
}
