import BenchmarkSupport
import Foundation
import JSONCodec
import LoadShims

#if canImport(Glibc)
import Glibc
#endif

// `DaemonLoad gateway-clients`: a child process of `DaemonLoad gateway …` (Gateway.swift) that
// holds many WebSocket connections to `chatfeedd --listen`, one per user, on one thread with
// epoll and non-blocking sockets (an async client per connection would cost the shared cores
// more than the daemon's own work). Each connection binds to `--source` (a 127.0.0.x address:
// a source address gives at most 28,232 loopback ports) and is one user signed in with an HS256
// token, subscribed to a window of its main list.
//
// It takes commands on stdin, one per line, and answers each with one line on stdout:
//   connect     open every connection (upgrade with `Authorization: Bearer`) → "connected ok=N failed=F first=…"
//   subscribe   feed.subscribe on each → "subscribed ok=N failed=F"
//   clear       zero the counters and the latency histogram → "cleared"
//   pause       stop reading every socket (no acks, no pongs) → "paused"
//   resume      read again; counts the notifications each connection gets from now → "resumed"
//   stats       "stats key=value …" (see `statsLine`)
//   quit        exit
// With --reconnect, a connection that closes comes back by itself (jittered backoff, at most
// --max-attempts) and resubscribes with `known` (its rows, as ChatClient does), then checks its
// rows against `chats.list`.

struct ClientOptions {
    var port = 0
    var host = "127.0.0.1"
    var source = "127.0.0.1"
    var firstUser = 0
    var count = 0
    var limit = 50
    var maxInFlight = 0
    var secretFile = ""
    /// Keep each subscription's rows (ids and revisions), resume with them and check them.
    var model = false
    var reconnect = false
    var maxAttempts = 3
    /// Connections whose upgrade or subscribe is under way at once.
    var concurrency = 200
}

private enum ConnectionState { case idle, connecting, upgrading, open, closed }

private final class Connection {
    let index: Int
    let user: String
    var fd: Int32 = -1
    var state = ConnectionState.idle
    var output: [UInt8] = []
    var outputOffset = 0
    var input: [UInt8] = []
    var fragments: [UInt8] = []
    var subscription = ""
    var subscribed = false
    var subscribeSent = false
    var everSubscribed = false
    var rows: [(id: String, revision: Int64)] = []
    var attempts = 0
    var reconnectAt: UInt64 = 0
    /// When the connect or the subscribe under way began (monotonic ns).
    var startedAt: UInt64 = 0
    var notificationsSinceResume = 0
    var structuralSinceResume = 0
    /// The kinds of the first notifications after `resume`: S structural batch, U pure updates, R reset.
    var kindsSinceResume = ""
    var verified = false
    var resumedAt: UInt64 = 0
    var verifiedAt: UInt64 = 0

    init(index: Int, user: String) {
        self.index = index
        self.user = user
    }
}

private let batchPrefix = Array(#"{"jsonrpc":"2.0","method":"feed.batch""#.utf8)
private let resetPrefix = Array(#"{"jsonrpc":"2.0","method":"feed.reset""#.utf8)
private let textMarker = Array(#""text":"t"#.utf8)
private let subscriptionMarker = Array(#""subscription":""#.utf8)
private let seqMarker = Array(#""seq":"#.utf8)
private let errorMarker = Array(#""error":"#.utf8)
private let pureUpdateMarker = Array(#""deletes":[],"inserts":[],"moves":[],"#.utf8)

/// The offset of `pattern` (not empty) in `bytes` from `start`, or nil.
/// - Complexity: O(n × m) at worst; memchr finds the candidates.
private func find(_ pattern: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int = 0) -> Int? {
    guard let base = bytes.baseAddress else { return nil }
    var i = start
    while i + pattern.count <= bytes.count {
        guard let hit = memchr(base + i, Int32(pattern[0]), bytes.count - pattern.count + 1 - i) else { return nil }
        let offset = base.distance(to: UnsafeRawPointer(hit))
        if memcmp(base + offset, pattern, pattern.count) == 0 { return offset }
        i = offset + 1
    }
    return nil
}

private func digits(in bytes: UnsafeRawBufferPointer, at start: Int) -> UInt64? {
    var i = start
    var value: UInt64 = 0
    while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
        value = value &* 10 &+ UInt64(bytes[i] - 48)
        i += 1
    }
    return i > start ? value : nil
}

final class GatewayClients {
    let options: ClientOptions
    private var connections: [Connection] = []
    private let epoll: Int32
    private let minter: GatewayTokenMinter
    private var scratch = [UInt8](repeating: 0, count: 1 << 18)
    private var sourceAddress = sockaddr_in()
    private var serverAddress = sockaddr_in()
    private var random = SplitMix64(seed: UInt64(getpid()))

    // The command under way and what it waits for.
    private var pendingCommand: String?
    private var connectQueue: [Int] = []
    private var inProgress = 0
    private var connectedOK = 0
    private var connectFailed = 0
    private var firstFailure = ""
    private var subscribeQueue: [Int] = []
    private var subscribedOK = 0
    private var subscribeFailed = 0
    private var paused = false
    private var commandBuffer: [UInt8] = []
    private var lastReconnectScan: UInt64 = 0
    private var lastTimeoutScan: UInt64 = 0
    /// An upgrade or a subscribe not answered within this is a failure.
    private let timeoutNanoseconds: UInt64 = 15_000_000_000

    // Counters (`clear` zeroes them).
    private var batches = 0
    private var resets = 0
    private var closes: [Int: Int] = [:]
    private var endsWithoutClose = 0
    private var errors = 0
    private var firstError = ""
    private var latencyBuckets = [Int](repeating: 0, count: 100_001)  // 0.1 ms each, the last: ≥ 10 s
    private var clearedAt: UInt64 = 0
    private var lastBatchAt: UInt64 = 0
    private var attemptCounts: [Int: Int] = [:]
    private var givenUp = 0
    private var verifiedOK = 0
    private var verifiedBad = 0
    private var firstMismatch = ""
    private var resubscribeResets = 0
    private var maxVerifiedAt: UInt64 = 0

    init(options: ClientOptions) throws {
        self.options = options
        minter = try GatewayTokenMinter(secretFile: options.secretFile)
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw BenchError("epoll_create1: \(String(cString: strerror(errno)))") }
        sourceAddress.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, options.source, &sourceAddress.sin_addr) == 1 else { throw BenchError("bad --source \(options.source)") }
        serverAddress.sin_family = sa_family_t(AF_INET)
        serverAddress.sin_port = in_port_t(UInt16(options.port).bigEndian)
        guard inet_pton(AF_INET, options.host, &serverAddress.sin_addr) == 1 else { throw BenchError("bad --host \(options.host)") }
        connections = (0..<options.count).map { Connection(index: $0, user: "u\(options.firstUser + $0)") }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = UInt64.max
        _ = fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK)
        epoll_ctl(epoll, EPOLL_CTL_ADD, 0, &event)
    }

    /// The event loop: returns at `quit` or the end of stdin.
    func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 1024)
        while true {
            let timeout = options.reconnect ? 20 : (connectQueue.isEmpty && subscribeQueue.isEmpty ? 1_000 : 10)
            let n = epoll_wait(epoll, &events, Int32(events.count), Int32(timeout))
            if n < 0 && errno != EINTR { fail("epoll_wait: \(String(cString: strerror(errno)))") }
            for i in 0..<max(0, Int(n)) {
                let key = events[i].data.u64
                if key == UInt64.max {
                    if !readCommands() { return }
                    continue
                }
                let connection = connections[Int(key)]
                let flags = events[i].events
                if flags & EPOLLOUT.rawValue != 0 { writable(connection) }
                if flags & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue) != 0, !paused {
                    readable(connection)
                }
            }
            pump()
        }
    }

    // MARK: Commands

    private func readCommands() -> Bool {
        while true {
            let n = scratch.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n == 0 { return false }
            if n < 0 { return errno == EAGAIN || errno == EINTR }
            commandBuffer += scratch[0..<n]
            while let newline = commandBuffer.firstIndex(of: 10) {
                let line = String(decoding: commandBuffer[..<newline], as: UTF8.self)
                commandBuffer.removeSubrange(...newline)
                if !command(line) { return false }
            }
        }
    }

    private func command(_ line: String) -> Bool {
        switch line {
        case "connect":
            pendingCommand = line
            connectQueue = Array(connections.indices.reversed())
            connectedOK = 0
            connectFailed = 0
        case "subscribe":
            pendingCommand = line
            subscribeQueue = connections.filter { $0.state == .open }.map(\.index).reversed()
            subscribedOK = 0
            subscribeFailed = 0
        case "clear":
            batches = 0; resets = 0; closes = [:]; endsWithoutClose = 0; errors = 0; firstError = ""
            latencyBuckets = [Int](repeating: 0, count: latencyBuckets.count)
            clearedAt = nowNanoseconds()
            lastBatchAt = 0
            reply("cleared")
        case "pause":
            paused = true
            reply("paused")
        case "resume":
            paused = false
            for connection in connections {
                connection.notificationsSinceResume = 0
                connection.structuralSinceResume = 0
                connection.kindsSinceResume = ""
            }
            for connection in connections where connection.state == .open || connection.state == .upgrading { readable(connection) }
            reply("resumed")
        case "stats":
            reply(statsLine())
        case "quit":
            return false
        default:
            reply("error unknown command \(line)")
        }
        return true
    }

    private func reply(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
            if n > 0 { offset += n } else if errno != EINTR { exit(3) }
        }
    }

    /// Every counter, in one line of key=value (the histogram as bucket:count pairs).
    private func statsLine() -> String {
        var fields = [
            "batches=\(batches)", "resets=\(resets)", "errors=\(errors)", "ends=\(endsWithoutClose)",
            "closes=\(closes.map { "\($0.key):\($0.value)" }.joined(separator: ","))",
            "open=\(connections.filter { $0.state == .open }.count)",
            "subscribed=\(connections.filter { $0.subscribed }.count)",
            "lastBatchAfterClear=\(lastBatchAt > clearedAt ? lastBatchAt - clearedAt : 0)",
            "attempts=\(attemptCounts.map { "\($0.key):\($0.value)" }.joined(separator: ","))",
            "givenUp=\(givenUp)", "verified=\(verifiedOK)", "mismatched=\(verifiedBad)",
            "resubscribeResets=\(resubscribeResets)", "maxVerifiedAt=\(maxVerifiedAt)",
            "structuralAfterResume=\(Dictionary(grouping: connections, by: { min($0.structuralSinceResume, 9) }).map { "\($0.key):\($0.value.count)" }.joined(separator: ","))",
            "patterns=\(Dictionary(grouping: connections, by: { $0.kindsSinceResume.isEmpty ? "-" : $0.kindsSinceResume }).map { "\($0.key):\($0.value.count)" }.joined(separator: ","))",
            "afterResume=\(Dictionary(grouping: connections, by: { min($0.notificationsSinceResume, 9) }).map { "\($0.key):\($0.value.count)" }.joined(separator: ","))",
        ]
        fields.append("hist=" + latencyBuckets.indices.filter { latencyBuckets[$0] > 0 }.map { "\($0):\(latencyBuckets[$0])" }.joined(separator: ","))
        let detail = [firstError, firstMismatch, firstFailure].first { !$0.isEmpty } ?? ""
        fields.append("first=" + detail.replacingOccurrences(of: " ", with: "_").replacingOccurrences(of: "\n", with: "_").prefix(300))
        return "stats " + fields.joined(separator: " ")
    }

    /// Starts queued connects and subscribes within the concurrency bound; answers the command
    /// under way once it is done; starts due reconnects.
    private func pump() {
        while inProgress < options.concurrency, let index = connectQueue.popLast() {
            open(connections[index])
        }
        while inProgress < options.concurrency, let index = subscribeQueue.popLast() {
            let connection = connections[index]
            guard connection.state == .open else { subscribeFailed += 1; continue }
            inProgress += 1
            subscribe(connection)
        }
        if inProgress > 0, nowNanoseconds() >= lastTimeoutScan + 200_000_000 {
            let now = nowNanoseconds()
            lastTimeoutScan = now
            for connection in connections where connection.startedAt + timeoutNanoseconds < now {
                if connection.state == .connecting || connection.state == .upgrading {
                    close(connection.fd); connection.fd = -1; inProgress -= 1
                    failed(connection, "no upgrade within 15 s")
                } else if connection.subscribeSent && !connection.subscribed {
                    connection.subscribeSent = false
                    inProgress -= 1
                    errors += 1
                    if firstError.isEmpty { firstError = "\(connection.user): no subscribe response within 15 s" }
                    if pendingCommand == "subscribe" { subscribeFailed += 1 }
                }
            }
        }
        if pendingCommand == "connect", connectQueue.isEmpty, inProgress == 0 {
            pendingCommand = nil
            reply("connected ok=\(connectedOK) failed=\(connectFailed) first=\(firstFailure.replacingOccurrences(of: " ", with: "_"))")
        } else if pendingCommand == "subscribe", subscribeQueue.isEmpty, inProgress == 0 {
            pendingCommand = nil
            reply("subscribed ok=\(subscribedOK) failed=\(subscribeFailed) first=\(firstError.replacingOccurrences(of: " ", with: "_").prefix(300))")
        }
        if options.reconnect, nowNanoseconds() >= lastReconnectScan + 10_000_000 {
            let now = nowNanoseconds()
            lastReconnectScan = now
            for connection in connections where connection.state == .closed && connection.reconnectAt != 0 && connection.reconnectAt <= now {
                connection.reconnectAt = 0
                open(connection)
            }
        }
    }

    // MARK: Connections

    private func open(_ connection: Connection) {
        connection.attempts += 1
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return failed(connection, "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_IP), 24 /* IP_BIND_ADDRESS_NO_PORT */, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var source = sourceAddress
        let bound = withUnsafePointer(to: &source) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { close(fd); return failed(connection, "bind \(options.source): \(String(cString: strerror(errno)))") }
        var server = serverAddress
        let rc = withUnsafePointer(to: &server) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 || errno == EINPROGRESS else { close(fd); return failed(connection, "connect: \(String(cString: strerror(errno)))") }
        connection.fd = fd
        connection.startedAt = nowNanoseconds()
        connection.state = .connecting
        connection.input.removeAll()
        connection.fragments.removeAll()
        connection.output.removeAll()
        connection.outputOffset = 0
        connection.subscribed = false
        connection.subscribeSent = false
        inProgress += 1
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
        event.data.u64 = UInt64(connection.index)
        epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event)
        let token = minter.token(user: connection.user)
        let request = "GET /v1/feed HTTP/1.1\r\nHost: \(options.host):\(options.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n\r\n"
        connection.output = Array(request.utf8)
    }

    /// A connect or upgrade that failed: counted, and retried later with --reconnect.
    private func failed(_ connection: Connection, _ reason: String) {
        if firstFailure.isEmpty { firstFailure = "\(connection.user): \(reason)" }
        if pendingCommand == "connect" { connectFailed += 1 }
        scheduleReconnect(connection)
    }

    private func scheduleReconnect(_ connection: Connection) {
        connection.state = .closed
        guard options.reconnect, connection.everSubscribed else { return }
        guard connection.attempts < options.maxAttempts else { givenUp += 1; return }
        // Jittered exponential backoff: 0.25 s × 2^(attempts so far) × [0.5, 1.5).
        let base = 250_000_000.0 * pow(2, Double(connection.attempts))
        connection.reconnectAt = nowNanoseconds() + UInt64(base * (0.5 + Double(random.next() >> 11) / Double(1 << 53)))
    }

    private func closeConnection(_ connection: Connection, code: Int?) {
        guard connection.fd >= 0 else { return }
        if connection.state == .connecting || connection.state == .upgrading { inProgress -= 1 }
        if connection.subscribeSent && !connection.subscribed { inProgress -= 1 }
        close(connection.fd)
        connection.fd = -1
        if let code { closes[code, default: 0] += 1 } else { endsWithoutClose += 1 }
        let wasOpen = connection.state == .open
        connection.state = .closed
        connection.subscribed = false
        connection.subscribeSent = false
        if wasOpen {
            // A connection lost after its upgrade: a new series of attempts.
            connection.attempts = 0
        }
        scheduleReconnect(connection)
    }

    private func writable(_ connection: Connection) {
        guard connection.fd >= 0 else { return }
        if connection.state == .connecting {
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(connection.fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error != 0 {
                close(connection.fd)
                connection.fd = -1
                inProgress -= 1
                return failed(connection, "connect: \(String(cString: strerror(error)))")
            }
            connection.state = .upgrading
        }
        flush(connection)
    }

    private func flush(_ connection: Connection) {
        guard connection.fd >= 0, connection.state != .connecting else { return }
        while connection.outputOffset < connection.output.count {
            let n = connection.output.withUnsafeBytes {
                write(connection.fd, $0.baseAddress! + connection.outputOffset, $0.count - connection.outputOffset)
            }
            if n > 0 {
                connection.outputOffset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return  // EAGAIN: EPOLLOUT resumes it; an error shows as a read error.
            }
        }
        connection.output.removeAll(keepingCapacity: true)
        connection.outputOffset = 0
    }

    /// Sends one masked text frame.
    private func send(_ connection: Connection, _ text: [UInt8], opcode: UInt8 = 0x1) {
        var frame: [UInt8] = [0x80 | opcode]
        if text.count < 126 {
            frame.append(0x80 | UInt8(text.count))
        } else if text.count < 65_536 {
            frame += [0x80 | 126, UInt8(text.count >> 8), UInt8(text.count & 0xff)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(truncatingIfNeeded: text.count >> shift)) }
        }
        let mask: [UInt8] = [0x37, 0xfa, 0x21, 0x3d]
        frame += mask
        frame.reserveCapacity(frame.count + text.count)
        for (i, byte) in text.enumerated() { frame.append(byte ^ mask[i & 3]) }
        let wasEmpty = connection.output.count == connection.outputOffset
        connection.output += frame
        if wasEmpty { flush(connection) }
    }

    private func subscribe(_ connection: Connection) {
        connection.subscribeSent = true
        connection.startedAt = nowNanoseconds()
        var params = #""limit":\#(options.limit),"maxInFlight":\#(options.maxInFlight)"#
        if options.model && connection.everSubscribed {
            params += #","known":["# + connection.rows.map { #"{"id":"\#($0.id)","revision":\#($0.revision)}"# }.joined(separator: ",") + "]"
        }
        send(connection, Array(#"{"jsonrpc":"2.0","id":1,"method":"feed.subscribe","params":{\#(params)}}"#.utf8))
    }

    private func readable(_ connection: Connection) {
        guard connection.fd >= 0, connection.state == .open || connection.state == .upgrading else { return }
        while connection.fd >= 0 && !paused {
            let n = scratch.withUnsafeMutableBytes { read(connection.fd, $0.baseAddress, $0.count) }
            if n > 0 {
                connection.input += scratch[0..<n]
                process(connection)
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && errno == EAGAIN {
                return
            } else {
                if connection.state == .upgrading {
                    close(connection.fd); connection.fd = -1; inProgress -= 1
                    return failed(connection, n == 0 ? "closed during the upgrade" : "read: \(String(cString: strerror(errno)))")
                }
                return closeConnection(connection, code: nil)
            }
        }
    }

    private func process(_ connection: Connection) {
        var position = 0
        if connection.state == .upgrading {
            let end = connection.input.withUnsafeBytes { find(Array("\r\n\r\n".utf8), in: $0) }
            guard let end else { return }
            let head = String(decoding: connection.input[..<end], as: UTF8.self)
            position = end + 4
            inProgress -= 1
            guard head.hasPrefix("HTTP/1.1 101") else {
                close(connection.fd); connection.fd = -1
                let body = String(decoding: connection.input[position...], as: UTF8.self)
                return failed(connection, (head.split(separator: "\r\n").first.map(String.init) ?? head) + " " + body)
            }
            connection.state = .open
            if pendingCommand == "connect" { connectedOK += 1 }
            if options.reconnect && connection.everSubscribed {
                inProgress += 1
                subscribe(connection)
            }
        }
        connection.input.withUnsafeBytes { bytes in
            while connection.fd >= 0, bytes.count - position >= 2 {
                let opcode = bytes[position] & 0x0f
                let fin = bytes[position] & 0x80 != 0
                var length = Int(bytes[position + 1] & 0x7f)
                var header = 2
                if length == 126 {
                    guard bytes.count - position >= 4 else { break }
                    length = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
                    header = 4
                } else if length == 127 {
                    guard bytes.count - position >= 10 else { break }
                    length = 0
                    for i in 2..<10 { length = length << 8 | Int(bytes[position + i]) }
                    header = 10
                }
                guard bytes.count - position - header >= length else { break }
                let payload = UnsafeRawBufferPointer(rebasing: bytes[(position + header)..<(position + header + length)])
                position += header + length
                switch opcode {
                case 0x0, 0x1, 0x2:
                    if fin && connection.fragments.isEmpty {
                        message(connection, payload)
                    } else {
                        connection.fragments += payload
                        if fin {
                            let whole = connection.fragments
                            connection.fragments = []
                            whole.withUnsafeBytes { message(connection, $0) }
                        }
                    }
                case 0x8:
                    let code = payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : 1005
                    closeConnection(connection, code: code)
                case 0x9:
                    send(connection, Array(payload), opcode: 0xA)
                default:
                    break
                }
            }
        }
        if connection.fd < 0 { connection.input.removeAll(); return }
        if position >= connection.input.count {
            connection.input.removeAll(keepingCapacity: connection.input.count < 1 << 16)
        } else if position > 0 {
            connection.input.removeSubrange(0..<position)
        }
    }

    // MARK: Messages

    private func message(_ connection: Connection, _ payload: UnsafeRawBufferPointer) {
        let isBatch = payload.starts(with: batchPrefix)
        if isBatch || payload.starts(with: resetPrefix) {
            connection.notificationsSinceResume += 1
            let structural = isBatch && find(pureUpdateMarker, in: payload) == nil
            if structural { connection.structuralSinceResume += 1 }
            if connection.kindsSinceResume.count < 8 { connection.kindsSinceResume += !isBatch ? "R" : structural ? "S" : "U" }
            let now = nowNanoseconds()
            if isBatch { batches += 1 } else { resets += 1 }
            lastBatchAt = now
            var from = 0
            while let hit = find(textMarker, in: payload, from: from) {
                from = hit + textMarker.count
                if let sent = digits(in: payload, at: from), sent >= clearedAt, sent <= now {
                    latencyBuckets[min(Int((now - sent) / 100_000), latencyBuckets.count - 1)] += 1
                }
            }
            if options.maxInFlight > 0, let s = find(subscriptionMarker, in: payload), let q = find(seqMarker, in: payload),
               let seq = digits(in: payload, at: q + seqMarker.count) {
                let start = s + subscriptionMarker.count
                var end = start
                while end < payload.count, payload[end] != UInt8(ascii: "\"") { end += 1 }
                let subscription = String(decoding: UnsafeRawBufferPointer(rebasing: payload[start..<end]), as: UTF8.self)
                send(connection, Array(#"{"jsonrpc":"2.0","method":"feed.ack","params":{"subscription":"\#(subscription)","seq":\#(seq)}}"#.utf8))
            }
            if options.model, let value = try? JSONValue(parsing: payload), let params = value["params"] {
                if isBatch { apply(params, to: connection) } else { connection.rows = rows(of: params["items"]) }
            }
            return
        }
        // A response: the subscribe (id 1) or the check (id 2).
        if find(errorMarker, in: payload) != nil {
            errors += 1
            if firstError.isEmpty { firstError = "\(connection.user): " + String(decoding: payload, as: UTF8.self) }
            if connection.subscribeSent && !connection.subscribed {
                connection.subscribeSent = false
                inProgress -= 1
                if pendingCommand == "subscribe" { subscribeFailed += 1 }
            }
            return
        }
        guard let value = try? JSONValue(parsing: payload), let result = value["result"] else { return }
        if value["id"]?.int64Value == 2 {
            return check(result, connection)
        }
        guard connection.subscribeSent, !connection.subscribed else { return }
        connection.subscribed = true
        inProgress -= 1
        if pendingCommand == "subscribe" { subscribedOK += 1 }
        connection.subscription = result["subscription"]?.stringValue ?? ""
        let resumed = connection.everSubscribed
        connection.everSubscribed = true
        if options.model {
            if let batches = result["batches"]?.arrayValue {
                for batch in batches { apply(batch, to: connection) }
            } else {
                if resumed { resubscribeResets += 1 }
                connection.rows = rows(of: result["items"])
            }
        }
        if resumed {
            attemptCounts[connection.attempts, default: 0] += 1
            connection.resumedAt = nowNanoseconds()
            if options.model {
                send(connection, Array(#"{"jsonrpc":"2.0","id":2,"method":"chats.list","params":{"limit":\#(options.limit)}}"#.utf8))
            }
        }
    }

    private func rows(of items: JSONValue?) -> [(id: String, revision: Int64)] {
        (items?.arrayValue ?? []).map { ($0["id"]?.stringValue ?? "", $0["revision"]?.int64Value ?? -1) }
    }

    /// Applies one batch by docs/PROTOCOL.md's "Applying a batch".
    private func apply(_ batch: JSONValue, to connection: Connection) {
        let old = connection.rows
        let deletes = Set((batch["deletes"]?.arrayValue ?? []).compactMap { $0.int64Value.map(Int.init) })
        let moves = (batch["moves"]?.arrayValue ?? []).compactMap { move -> (Int, Int)? in
            guard let from = move["from"]?.int64Value, let to = move["to"]?.int64Value else { return nil }
            return (Int(from), Int(to))
        }
        let inserts = (batch["inserts"]?.arrayValue ?? []).compactMap { insert -> (Int, (id: String, revision: Int64))? in
            guard let index = insert["index"]?.int64Value, let chat = insert["chat"] else { return nil }
            return (Int(index), (chat["id"]?.stringValue ?? "", chat["revision"]?.int64Value ?? -1))
        }
        if !deletes.isEmpty || !moves.isEmpty || !inserts.isEmpty {
            let movedFrom = Set(moves.map(\.0))
            let left = old.indices.filter { !deletes.contains($0) && !movedFrom.contains($0) }.map { old[$0] }
            let count = old.count - deletes.count + inserts.count
            var new: [(id: String, revision: Int64)?] = Array(repeating: nil, count: max(count, 0))
            for (index, row) in inserts where index < new.count { new[index] = row }
            for (from, to) in moves where to < new.count && from < old.count { new[to] = old[from] }
            var next = left.makeIterator()
            for i in new.indices where new[i] == nil { new[i] = next.next() }
            connection.rows = new.map { $0 ?? ("?", -1) }
        }
        for update in batch["updates"]?.arrayValue ?? [] {
            guard let index = update["index"]?.int64Value.map(Int.init), index < connection.rows.count, let chat = update["chat"] else { continue }
            connection.rows[index] = (chat["id"]?.stringValue ?? "", chat["revision"]?.int64Value ?? -1)
        }
    }

    /// Compares the rows with `chats.list`'s.
    private func check(_ result: JSONValue, _ connection: Connection) {
        let server = rows(of: result["items"])
        connection.verifiedAt = nowNanoseconds()
        maxVerifiedAt = max(maxVerifiedAt, connection.verifiedAt)
        if server.count == connection.rows.count && zip(server, connection.rows).allSatisfy({ $0.id == $1.id && $0.revision == $1.revision }) {
            verifiedOK += 1
        } else {
            verifiedBad += 1
            if firstMismatch.isEmpty {
                firstMismatch = "\(connection.user): shows \(connection.rows.map { "\($0.id)@\($0.revision)" }) server \(server.map { "\($0.id)@\($0.revision)" })"
            }
        }
    }
}
