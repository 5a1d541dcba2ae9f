/// The engine has stopped: it takes no more work (`ChatEngine.user(_:)` after `stop()`).
public struct EngineStoppedError: Error, CustomStringConvertible, Sendable {
    public init() {}
    public var description: String { "the engine has stopped" }
}
