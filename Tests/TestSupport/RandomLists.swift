/// Random list pairs for diff tests.
public enum RandomLists {
    /// A list of `count` distinct ids and a new list made from it with about `fraction` of the
    /// rows deleted, inserted, moved and revision-changed each.
    public static func pair(
        count: Int, fraction: Double, using generator: inout some RandomNumberGenerator
    ) -> (old: [TestItem], new: [TestItem]) {
        let old = (0..<count).map { TestItem(id: $0) }
        var new = old
        let changes = Int((Double(count) * fraction).rounded())
        for _ in 0..<changes where !new.isEmpty {
            new.remove(at: Int.random(in: 0..<new.count, using: &generator))
        }
        var nextID = count
        for _ in 0..<changes {
            new.insert(TestItem(id: nextID), at: Int.random(in: 0...new.count, using: &generator))
            nextID += 1
        }
        for _ in 0..<changes where !new.isEmpty {
            let item = new.remove(at: Int.random(in: 0..<new.count, using: &generator))
            new.insert(item, at: Int.random(in: 0...new.count, using: &generator))
        }
        for _ in 0..<changes where !new.isEmpty {
            new[Int.random(in: 0..<new.count, using: &generator)].revision += 1
        }
        return (old, new)
    }

    /// Every arrangement (ordered subset) of `universe`, the empty one included.
    public static func arrangements(of universe: [Int]) -> [[Int]] {
        var result: [[Int]] = [[]]
        func extend(_ prefix: [Int], _ rest: [Int]) {
            for (index, id) in rest.enumerated() {
                var next = prefix
                next.append(id)
                result.append(next)
                var remaining = rest
                remaining.remove(at: index)
                extend(next, remaining)
            }
        }
        extend([], universe)
        return result
    }
}
