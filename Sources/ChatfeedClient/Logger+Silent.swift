import Logging

extension Logger {
    /// A logger that drops everything: the default of the client and of the in-process engine,
    /// which log only through a logger the app gives them.
    public static func silent(_ label: String) -> Logger {
        Logger(label: label, factory: { _ in SwiftLogNoOpLogHandler() })
    }
}
