import ChatfeedGateway
import Foundation
import Testing
import TestSupport

extension GatewaySuites {
    /// Connections that never finish their upgrade request: they neither hold the server's
    /// shutdown nor a descriptor for good.
    @Suite struct GatewayUpgradeTests {
        /// A TCP connection to `port` that sent `partial` (maybe nothing) and waits.
        final class SilentClient: @unchecked Sendable {
            let socket: Int32

            init(port: Int, partial: String) {
                let connected: Bool
                (socket, connected) = RawHTTP.connectedSocket(port: port)
                #expect(connected)
                if !partial.isEmpty { _ = Array(partial.utf8).withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) } }
            }

            /// Whether the server closed the connection within `seconds` (read on a thread of its own).
            func closedByServer(within seconds: Int) async -> Bool {
                await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
                    Thread { [socket] in
                        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
                        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                        var buffer = [UInt8](repeating: 0, count: 256)
                        while true {
                            let count = recv(socket, &buffer, buffer.count, 0)
                            if count > 0 { continue }  // an answer (none is expected): read on to the close
                            done.resume(returning: count == 0 || errno == ECONNRESET)
                            return
                        }
                    }.start()
                }
            }

            deinit { close(socket) }
        }

        /// A client's ping is answered with a pong carrying its payload: the URLSession client
        /// (Apple platforms) learns that its upgrade succeeded from that pong.
        @Test(.hangGuard) func aClientsPingIsAnsweredWithItsPong() async throws {
            let harness = try await GatewayHarness()
            let token = try await harness.token("me")
            let answer = try await RawHTTP.ping(
                port: harness.port, "/v1/feed", headers: ["Authorization": "Bearer \(token)"], payload: Array("are you there".utf8))
            #expect(answer?.opcode == 0xA, "a pong")
            #expect(answer?.payload == Array("are you there".utf8))
            try await harness.stop()
        }

        /// An upgrade's token check runs on the gateway's `taskExecutor`: a gateway given threads
        /// of its own answers while every thread of the cooperative pool is busy (in a whole test
        /// run, with the synchronous tests: a CLI test's upgrade once waited more than 10 s so).
        @Test(.hangGuard) func anUpgradeIsAnsweredWhileEveryThreadOfTheCooperativePoolIsBusy() async throws {
            try await withTaskExecutorPreference(DedicatedExecutor.shared) {
                let harness = try await GatewayHarness()
                let token = try await harness.token("me")
                let occupation = await CooperativePoolOccupation.occupy()
                let answer = try await RawHTTP.ping(
                    port: harness.port, "/v1/feed", headers: ["Authorization": "Bearer \(token)"], payload: Array("busy".utf8))
                #expect(occupation.release(), "the pool was given back before the answer")
                #expect(answer?.opcode == 0xA, "no upgrade while the pool was busy")
                try await harness.stop()
            }
        }

        static let partialRequest = "GET /v1/feed HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"

        /// Before, the server's shutdown waited on such connections until their clients left.
        @Test func aShutdownClosesConnectionsThatNeverSentTheirRequest() async throws {
            let harness = try await GatewayHarness()  // pingIntervalSeconds 30: no deadline meanwhile
            let silent = SilentClient(port: harness.port, partial: "")
            let partial = SilentClient(port: harness.port, partial: Self.partialRequest)
            let socket = try await harness.connect("me")
            _ = try await socket.result("server.version")
            try await Task.sleep(for: .milliseconds(200))
            let started = ContinuousClock.now
            // Should the shutdown wait for these clients, they leave after 20 s (the test fails, and ends).
            let watchdog = Task { [silent, partial] in
                try await Task.sleep(for: .seconds(20))
                shutdown(silent.socket, Int32(SHUT_RDWR))
                shutdown(partial.socket, Int32(SHUT_RDWR))
            }
            try await harness.stop()
            watchdog.cancel()
            let took = ContinuousClock.now - started
            #expect(took < .seconds(15), "the shutdown waited \(took) for clients that never sent their request")
            #expect(await silent.closedByServer(within: 1))
            #expect(await partial.closedByServer(within: 1))
        }

        @Test func aConnectionThatDoesNotFinishItsRequestWithinTwoPingIntervalsIsClosed() async throws {
            let harness = try await GatewayHarness { $0.pingIntervalSeconds = 0.5 }
            let silent = SilentClient(port: harness.port, partial: "")
            let partial = SilentClient(port: harness.port, partial: Self.partialRequest)
            #expect(await silent.closedByServer(within: 10))
            #expect(await partial.closedByServer(within: 10))
            // A complete upgrade is not cut by that deadline.
            let socket = try await harness.connect("me")
            try await Task.sleep(for: .seconds(1.5))
            _ = try await socket.result("server.version")
            try await harness.stop()
        }
    }
}
