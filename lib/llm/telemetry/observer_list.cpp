// observe_all(): several observers as one (nous/llm/telemetry.hpp).

#include <algorithm>

#include "nous/llm/telemetry.hpp"

namespace nous::llm {

namespace {

class ObserverList final : public Observer {
  public:
    explicit ObserverList(std::vector<std::shared_ptr<Observer>> observers)
        : observers_(std::move(observers)) {}
    void on_event(const CallEvent& event) noexcept override {
        for (const auto& o : observers_) o->on_event(event);
    }

  private:
    const std::vector<std::shared_ptr<Observer>> observers_;
};

}  // namespace

std::shared_ptr<Observer> observe_all(std::vector<std::shared_ptr<Observer>> observers) {
    observers.erase(std::remove(observers.begin(), observers.end(), nullptr), observers.end());
    return std::make_shared<ObserverList>(std::move(observers));
}

}  // namespace nous::llm
