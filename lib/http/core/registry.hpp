#pragma once
// A thread-safe registry of named implementations (post backends, stream
// backends): registered by factory, made once on first use.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nous/http/result.hpp"

namespace nous::http::detail {

template <typename T>
class NamedRegistry {
  public:
    using Factory = std::function<std::shared_ptr<T>()>;

    /// Adds or replaces `name`; its factory runs on first use.
    void add(const std::string& name, Factory factory) {
        std::lock_guard lock(mutex_);
        entries_[name] = Entry{std::move(factory), nullptr};
    }
    /// Adds a ready instance.
    void add_instance(const std::string& name, std::shared_ptr<T> instance) {
        std::lock_guard lock(mutex_);
        entries_[name] = Entry{nullptr, std::move(instance)};
    }
    bool contains(const std::string& name) const {
        std::lock_guard lock(mutex_);
        return entries_.count(name) != 0;
    }
    std::vector<std::string> names() const {
        std::lock_guard lock(mutex_);
        std::vector<std::string> out;
        for (const auto& [name, entry] : entries_) out.push_back(name);
        return out;
    }
    /// The instance for `name`; backend_unavailable if unknown or its factory made nothing.
    Result<std::shared_ptr<T>> get(const std::string& name, const char* kind) {
        Factory factory;
        {
            std::lock_guard lock(mutex_);
            auto it = entries_.find(name);
            if (it == entries_.end())
                return Error(ErrorCode::backend_unavailable,
                             std::string(kind) + " '" + name + "' is not registered");
            if (it->second.instance) return it->second.instance;
            factory = it->second.factory;
        }
        // The factory runs outside the lock: it may call back into the library.
        std::shared_ptr<T> made = factory ? factory() : nullptr;
        if (!made)
            return Error(ErrorCode::backend_unavailable,
                         std::string(kind) + " '" + name + "' could not be created");
        std::lock_guard lock(mutex_);
        auto& entry = entries_[name];
        if (!entry.instance) entry.instance = std::move(made);
        return entry.instance;
    }

  private:
    struct Entry {
        Factory factory;
        std::shared_ptr<T> instance;
    };
    mutable std::mutex mutex_;
    std::map<std::string, Entry> entries_;
};

}  // namespace nous::http::detail
