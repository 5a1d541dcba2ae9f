import Foundation

/// A task executor with threads of its own, for the tests whose timing must not depend on the
/// cooperative pool. In a whole `swift test` run the synchronous tests keep the pool's threads
/// (two on a 2-core machine) busy for seconds at a time, and an asynchronous task waits for a
/// free thread at each suspension: a client that must answer a ping within a second, or a pause
/// that must last 1.5 s and not 3, cannot be asked of the pool then. Run such a test's tasks here
/// (`withTaskExecutorPreference(DedicatedExecutor.shared) { … }`, `Task(executorPreference:)`):
/// its child tasks and the actors it calls follow (SE-0417); unstructured tasks do not.
public final class DedicatedExecutor: TaskExecutor, @unchecked Sendable {
    /// Four threads, shared by every test that asks.
    public static let shared = DedicatedExecutor(threads: 4, name: "test-executor")

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var next = 0

    public init(threads: Int, name: String) {
        for index in 0..<threads {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while next == jobs.count { condition.wait() }
            let job = jobs[next]
            next += 1
            if next == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
