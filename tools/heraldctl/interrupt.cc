#include "tools/heraldctl/interrupt.h"

namespace herald::heraldctl {

Interrupt::Registration::Registration(Interrupt* interrupt, grpc::ClientContext* context)
    : interrupt_(interrupt) {
  if (interrupt_ == nullptr) return;
  std::lock_guard<std::mutex> lock(interrupt_->mu_);
  interrupt_->active_ = context;
  if (interrupt_->triggered_) context->TryCancel();
}

Interrupt::Registration::~Registration() {
  if (interrupt_ == nullptr) return;
  std::lock_guard<std::mutex> lock(interrupt_->mu_);
  interrupt_->active_ = nullptr;
}

void Interrupt::Trigger() {
  std::lock_guard<std::mutex> lock(mu_);
  triggered_ = true;
  if (active_ != nullptr) active_->TryCancel();
}

bool Interrupt::triggered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return triggered_;
}

}  // namespace herald::heraldctl
