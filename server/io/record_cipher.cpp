#include "server/io/record_cipher.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstdlib>
#include <cstring>

#if SLUICE_HAVE_IPSEC_MB
#include <intel-ipsec-mb.h>
#endif

namespace sluice::server {

namespace {

[[maybe_unused]] bool is_aes_gcm(uint16_t suite) { return suite == 0x1301 || suite == 0x1302; }

class EvpRecordCipher final : public RecordCipher {
 public:
  ~EvpRecordCipher() override { EVP_CIPHER_CTX_free(ctx_); }

  bool init(uint16_t suite, std::span<const uint8_t> key) {
    const EVP_CIPHER* cipher = suite == 0x1301   ? EVP_aes_128_gcm()
                               : suite == 0x1302 ? EVP_aes_256_gcm()
                                                 : EVP_chacha20_poly1305();
    ctx_ = EVP_CIPHER_CTX_new();
    return ctx_ && EVP_EncryptInit_ex(ctx_, cipher, nullptr, nullptr, nullptr) == 1 &&
           EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_SET_IVLEN, static_cast<int>(kNonceSize), nullptr) == 1 &&
           EVP_EncryptInit_ex(ctx_, nullptr, nullptr, key.data(), nullptr) == 1;
  }

  bool seal(const uint8_t* nonce, std::span<const uint8_t> aad, Pieces pieces, uint8_t* out, uint8_t* tag) override {
    size_t length = 0;
    for (const auto& p : pieces) {
      if (p.data() != out + length && !p.empty()) std::memmove(out + length, p.data(), p.size());
      length += p.size();
    }
    int n = 0, tail = 0;
    return EVP_EncryptInit_ex(ctx_, nullptr, nullptr, nullptr, nonce) == 1 &&
           EVP_EncryptUpdate(ctx_, nullptr, &n, aad.data(), static_cast<int>(aad.size())) == 1 &&
           EVP_EncryptUpdate(ctx_, out, &n, out, static_cast<int>(length)) == 1 &&
           EVP_EncryptFinal_ex(ctx_, out + n, &tail) == 1 &&
           EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_GET_TAG, static_cast<int>(kTagSize), tag) == 1;
  }

 private:
  EVP_CIPHER_CTX* ctx_ = nullptr;
};

#if SLUICE_HAVE_IPSEC_MB

// One manager for the process: the GCM calls only read its function pointers, so the loops share
// it. Null when the CPU has no AES-NI or the environment asks for OpenSSL.
struct IpsecMb {
  IMB_MGR* mgr = nullptr;
  IMB_ARCH arch = IMB_ARCH_NONE;

  IpsecMb() {
    const char* choice = std::getenv("SLUICE_AES_GCM");
    if (choice && std::strcmp(choice, "openssl") == 0) return;
    mgr = alloc_mb_mgr(0);
    if (!mgr) return;
    init_mb_mgr_auto(mgr, &arch);
    if (imb_get_errno(mgr) != 0 || arch == IMB_ARCH_NONE) {
      free_mb_mgr(mgr);
      mgr = nullptr;
    }
  }
  ~IpsecMb() {
    if (mgr) free_mb_mgr(mgr);
  }
};

const IpsecMb& ipsec_mb() {
  static const IpsecMb instance;
  return instance;
}

const char* arch_name(IMB_ARCH arch) {
  switch (arch) {
    case IMB_ARCH_SSE: return "intel-ipsec-mb (sse)";
    case IMB_ARCH_AVX: return "intel-ipsec-mb (avx)";
    case IMB_ARCH_AVX2: return "intel-ipsec-mb (avx2)";
    case IMB_ARCH_AVX512: return "intel-ipsec-mb (avx512)";
    default: return "intel-ipsec-mb";
  }
}

// True when intel-ipsec-mb seals this suite's records in this process.
bool ipsec_mb_seals(uint16_t suite) { return is_aes_gcm(suite) && ipsec_mb().mgr != nullptr; }

// The manager's GCM entry points for one key size (what the library's IMB_AES128_GCM_* and
// IMB_AES256_GCM_* macros call), chosen once per connection.
struct GcmCalls {
  aes_gcm_pre_t pre;
  aes_gcm_init_var_iv_t init;
  aes_gcm_enc_dec_update_t update;
  aes_gcm_enc_dec_finalize_t finalize;
};

GcmCalls gcm_calls(const IMB_MGR* mgr, bool aes256) {
  if (aes256) return {mgr->gcm256_pre, mgr->gcm256_init_var_iv, mgr->gcm256_enc_update, mgr->gcm256_enc_finalize};
  return {mgr->gcm128_pre, mgr->gcm128_init_var_iv, mgr->gcm128_enc_update, mgr->gcm128_enc_finalize};
}

class IpsecMbRecordCipher final : public RecordCipher {
 public:
  IpsecMbRecordCipher(const GcmCalls& calls, std::span<const uint8_t> key) : calls_(calls) {
    calls_.pre(key.data(), &keys_.data);
  }
  ~IpsecMbRecordCipher() override { OPENSSL_cleanse(&keys_, sizeof keys_); }

  bool seal(const uint8_t* nonce, std::span<const uint8_t> aad, Pieces pieces, uint8_t* out, uint8_t* tag) override {
    gcm_context_data context;
    calls_.init(&keys_.data, &context, nonce, kNonceSize, aad.data(), aad.size());
    for (const auto& p : pieces) {
      calls_.update(&keys_.data, &context, out, p.data(), p.size());
      out += p.size();
    }
    calls_.finalize(&keys_.data, &context, tag, kTagSize);
    OPENSSL_cleanse(&context, sizeof context);
    return true;
  }

 private:
  // The expanded keys, 64-byte aligned as the library's vector code loads them (its header aligns
  // the struct only when LINUX is defined).
  struct alignas(64) Keys {
    gcm_key_data data;
  };

  GcmCalls calls_;
  Keys keys_{};
};

#endif

}  // namespace

size_t RecordCipher::key_size(uint16_t suite) {
  switch (suite) {
    case 0x1301: return 16;
    case 0x1302: return 32;
    case 0x1303: return 32;
    default: return 0;
  }
}

std::unique_ptr<RecordCipher> RecordCipher::make(uint16_t suite, std::span<const uint8_t> key, Engine engine) {
  if (key_size(suite) == 0 || key.size() != key_size(suite)) return nullptr;
#if SLUICE_HAVE_IPSEC_MB
  if (engine == Engine::best && ipsec_mb_seals(suite)) {
    return std::make_unique<IpsecMbRecordCipher>(gcm_calls(ipsec_mb().mgr, suite == 0x1302), key);
  }
#else
  (void)engine;
#endif
  auto cipher = std::make_unique<EvpRecordCipher>();
  if (!cipher->init(suite, key)) return nullptr;
  return cipher;
}

const char* RecordCipher::engine(uint16_t suite) {
#if SLUICE_HAVE_IPSEC_MB
  if (ipsec_mb_seals(suite)) return arch_name(ipsec_mb().arch);
#endif
  (void)suite;
  return "openssl";
}

}  // namespace sluice::server
