import ChatfeedEngine
import ChatfeedGateway
import Logging
import ServiceLifecycle
import Synchronization

/// The engine, from the daemon that loads it to the gateway that serves it.
final class EngineHandoff: Sendable {
    private let state = Mutex<(engine: ChatEngine?, finished: Bool, waiters: [CheckedContinuation<ChatEngine?, Never>])>((nil, false, []))

    func set(_ engine: ChatEngine) {
        let waiters = state.withLock { state in
            state.engine = engine
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: engine) }
    }

    /// No engine will come (it could not load, or it stopped).
    func finish() {
        let waiters = state.withLock { state in
            state.finished = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// The engine once loaded; nil when none will come.
    func engine() async -> ChatEngine? {
        await withCheckedContinuation { waiter in
            let now: ChatEngine?? = state.withLock { state in
                if let engine = state.engine { return .some(engine) }
                if state.finished { return .some(nil) }
                state.waiters.append(waiter)
                return nil
            }
            if let now { waiter.resume(returning: now) }
        }
    }
}

/// Runs the gateway (`--listen`) on the daemon's engine once it is loaded. Listed after the
/// daemon in the service group, so that a shutdown closes the WebSockets (1012) before the engine
/// stops and commits.
struct GatewayLauncher: Service {
    let handoff: EngineHandoff
    let options: GatewayOptions
    let logger: Logger

    func run() async throws {
        let engine = await withGracefulShutdownHandler {
            await handoff.engine()
        } onGracefulShutdown: {
            handoff.finish()
        }
        guard let engine else { return }
        try await Gateway(engine: engine, options: options, logger: logger).run()
    }
}
