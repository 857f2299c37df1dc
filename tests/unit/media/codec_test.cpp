// Codec configuration and FLV/E-RTMP tag header parsing, with hand-written bytes. The H.264 and
// HEVC parameter sets were produced by x264/x265 (ffmpeg testsrc) and copied here as hex.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "unit/test_bytes.hpp"
#include "media/codec/aac.hpp"
#include "media/codec/avc.hpp"
#include "media/codec/bit_reader.hpp"
#include "media/codec/flv_audio.hpp"
#include "media/codec/flv_video.hpp"
#include "media/codec/fourcc.hpp"
#include "media/codec/hevc.hpp"
#include "media/codec_info.hpp"
#include "media/frame.hpp"
#include "protocol/message.hpp"

using namespace sluice;
using namespace sluice::media;
using sluice::Errc;
using sluice::Slice;
using sluice::test::be16;
using sluice::test::be24;
using sluice::test::be32;
using sluice::test::Bytes;
using sluice::test::cat;
using sluice::test::hex;

namespace {

const Bytes kSps720 = hex("6764001facd9405005bb011000000300100000030320f1831960");
const Bytes kSps1080 = hex("67640028acd940780227e5c044000003000400000300c83c60c658");
const Bytes kPps = hex("68ebe3cb22c0");
const Bytes kHevcVps = hex("40010c01ffff016000000300900000030000030078959809");
const Bytes kHevcSps = hex("420101016000000300900000030000030078a003c08010e596566924caf0168080000003008000000c84");
const Bytes kHevcPps = hex("4401c172b46240");

Bytes avc_record(const Bytes& sps) {
  // Profile, compatibility and level are copied from the SPS, as muxers do.
  const Bytes head = sps.size() >= 4 ? Bytes{0x01, sps[1], sps[2], sps[3], 0xff, 0xe1} : hex("01 64 00 1f ff e1");
  return cat({head, be16(uint32_t(sps.size())), sps, hex("01"), be16(uint32_t(kPps.size())), kPps});
}

Bytes hevc_record() {
  return cat({hex("01 01 60000000 900000000000 78 f000 fc fd f8 f8 0000 0f 03"), hex("20 0001"),
              be16(uint32_t(kHevcVps.size())), kHevcVps, hex("21 0001"), be16(uint32_t(kHevcSps.size())), kHevcSps,
              hex("22 0001"), be16(uint32_t(kHevcPps.size())), kHevcPps});
}

Bytes str(std::string_view s) { return Bytes(s.begin(), s.end()); }

}  // namespace

TEST_CASE("BitReader: Exp-Golomb and emulation prevention") {
  // 1 | 010 | 011 | 00100 | 00101 -> ue 0, 1, 2, 3 then se of 4 = -2
  const Bytes b = hex("a6 42 80");
  BitReader br(b);
  CHECK(br.ue() == 0);
  CHECK(br.ue() == 1);
  CHECK(br.ue() == 2);
  CHECK(br.ue() == 3);
  CHECK(br.se() == -2);
  CHECK_FALSE(br.failed());

  const Bytes escaped = hex("00 00 03 01 ff");
  BitReader rbsp(escaped, BitReader::Mode::Rbsp);
  CHECK(rbsp.bits(24) == 1);
  CHECK(rbsp.bits(8) == 0xff);
  BitReader plain(escaped);
  CHECK(plain.bits(24) == 3);

  BitReader over(b);
  over.skip_bits(24);
  CHECK(over.bits(1) == 0);
  CHECK(over.failed());

  const Bytes zeros(8, 0);
  BitReader endless(zeros);
  CHECK(endless.ue() == 0);
  CHECK(endless.failed());
}

TEST_CASE("H.264 SPS: 1280x720 and 1920x1080 with cropping") {
  auto a = parse_avc_sps(kSps720);
  REQUIRE(a.ok());
  CHECK(a->profile_idc == 100);
  CHECK(a->level_idc == 31);
  CHECK(a->width == 1280);
  CHECK(a->height == 720);

  auto b = parse_avc_sps(kSps1080);
  REQUIRE(b.ok());
  CHECK(b->level_idc == 40);
  CHECK(b->width == 1920);
  CHECK(b->height == 1080);  // coded as 1088 with frame_crop_bottom_offset 4

  CHECK_FALSE(parse_avc_sps(kPps).ok());
  CHECK_FALSE(parse_avc_sps({}).ok());
  for (size_t n = 1; n < 11; ++n) CHECK_FALSE(parse_avc_sps(std::span(kSps1080).first(n)).ok());
}

TEST_CASE("AVCDecoderConfigurationRecord") {
  const Bytes rec = avc_record(kSps1080);
  auto c = parse_avc_config(rec);
  REQUIRE(c.ok());
  CHECK(c->profile == 100);
  CHECK(c->level == 40);
  CHECK(c->nalu_length_size == 4);
  CHECK(c->sps_count == 1);
  CHECK(c->pps_count == 1);
  CHECK(c->width == 1920);
  CHECK(c->height == 1080);
  CHECK(avc_profile_name(c->profile) == "High");

  for (size_t n = 0; n < rec.size(); ++n) CHECK_FALSE(parse_avc_config(std::span(rec).first(n)).ok());
  Bytes bad_version = rec;
  bad_version[0] = 0;
  CHECK(parse_avc_config(bad_version).error().code == Errc::Malformed);
  // A record whose SPS is garbage still gives the profile, without dimensions.
  auto junk = parse_avc_config(avc_record(hex("67 ff ff")));
  REQUIRE(junk.ok());
  CHECK(junk->width == 0);
}

TEST_CASE("HEVC SPS and HEVCDecoderConfigurationRecord") {
  auto sps = parse_hevc_sps(kHevcSps);
  REQUIRE(sps.ok());
  CHECK(sps->profile_idc == 1);
  CHECK(sps->level_idc == 120);
  CHECK(sps->width == 1920);
  CHECK(sps->height == 1080);

  const Bytes rec = hevc_record();
  auto c = parse_hevc_config(rec);
  REQUIRE(c.ok());
  CHECK(c->profile_idc == 1);
  CHECK(c->level_idc == 120);
  CHECK(c->nalu_length_size == 4);
  CHECK(c->array_count == 3);
  CHECK(c->width == 1920);
  CHECK(c->height == 1080);
  CHECK(hevc_profile_name(c->profile_idc) == "Main");
  for (size_t n = 0; n < rec.size(); ++n) CHECK_FALSE(parse_hevc_config(std::span(rec).first(n)).ok());
}

TEST_CASE("AAC AudioSpecificConfig") {
  auto lc = parse_aac_config(hex("12 10"));
  REQUIRE(lc.ok());
  CHECK(lc->object_type == 2);
  CHECK(lc->sample_rate == 44100);
  CHECK(lc->channels == 2);
  CHECK(aac_object_type_name(lc->object_type) == "AAC-LC");

  auto lc48 = parse_aac_config(hex("11 90"));
  REQUIRE(lc48.ok());
  CHECK(lc48->sample_rate == 48000);

  // HE-AAC with explicit SBR: AOT 5, core 24 kHz (6), mono, extension 48 kHz (3), AOT 2.
  auto he = parse_aac_config(hex("2b 09 88 00"));
  REQUIRE(he.ok());
  CHECK(he->object_type == 5);
  CHECK(he->sample_rate == 48000);
  CHECK(he->channels == 1);
  CHECK(he->core_object_type == 2);  // what ADTS carries (media/ts/adts.hpp)
  CHECK(he->core_sample_rate == 24000);
  CHECK(lc->core_object_type == 2);
  CHECK(lc->core_sample_rate == 44100);
  // The core's object type cut off: taken as LC.
  auto he_cut = parse_aac_config(hex("2b 09 80"));
  REQUIRE(he_cut.ok());
  CHECK(he_cut->core_object_type == 2);

  // Explicit frequency (index 15) and 7.1 (channel config 7).
  auto explicit_rate = parse_aac_config(hex("17 80 3e 80 38"));
  REQUIRE(explicit_rate.ok());
  CHECK(explicit_rate->sample_rate == 32000);
  CHECK(explicit_rate->channels == 8);

  CHECK_FALSE(parse_aac_config({}).ok());
  CHECK_FALSE(parse_aac_config(hex("12")).ok());
  CHECK_FALSE(parse_aac_config(hex("16 90")).ok());  // sampling index 13 is reserved
}

TEST_CASE("legacy video tags") {
  const Bytes seq = cat({hex("17 00 000000"), avc_record(kSps720)});
  auto h = parse_video_tag(seq);
  REQUIRE(h.ok());
  CHECK_FALSE(h->enhanced);
  CHECK(h->codec() == VideoCodec::Avc);
  CHECK(h->is_sequence_header());
  CHECK_FALSE(h->is_keyframe());
  REQUIRE(h->tracks.stored == 1);
  CHECK(h->tracks.items[0].data_offset == 5);

  auto key = parse_video_tag(hex("17 01 000050 00000001 65"));
  REQUIRE(key.ok());
  CHECK(key->is_keyframe());
  CHECK(key->tracks.items[0].composition_time == 0x50);

  auto inter = parse_video_tag(hex("27 01 fffff6 00"));
  REQUIRE(inter.ok());
  CHECK_FALSE(inter->is_keyframe());
  CHECK(inter->tracks.items[0].composition_time == -10);

  auto vp6 = parse_video_tag(hex("14 00 11"));
  REQUIRE(vp6.ok());
  CHECK(vp6->codec() == VideoCodec::Vp6);
  CHECK(vp6->is_keyframe());

  auto cmd = parse_video_tag(hex("57 01"));
  REQUIRE(cmd.ok());
  CHECK(cmd->has_command);
  CHECK(cmd->command == 1);
  CHECK_FALSE(cmd->is_keyframe());

  CHECK(parse_video_tag(hex("17")).error().code == Errc::Truncated);
  CHECK(parse_video_tag(hex("17 05 000000")).error().code == Errc::Malformed);
  CHECK_FALSE(parse_video_tag({}).ok());
}

TEST_CASE("E-RTMP video: hvc1 SequenceStart, CodedFrames, CodedFramesX") {
  const Bytes record = hevc_record();
  const Bytes seq = cat({hex("90"), str("hvc1"), record});
  auto h = parse_video_tag(seq);
  REQUIRE(h.ok());
  CHECK(h->enhanced);
  CHECK(h->frame_type == VideoFrameType::Key);
  CHECK(h->packet_type == VideoPacketType::SequenceStart);
  CHECK(h->is_sequence_header());
  CHECK_FALSE(h->is_keyframe());
  CHECK(h->codec() == VideoCodec::Hevc);
  REQUIRE(h->tracks.stored == 1);
  CHECK(h->tracks.items[0].data_offset == 5);
  CHECK(h->tracks.items[0].data_size == record.size());
  auto c = parse_hevc_config(std::span(seq).subspan(5));
  REQUIRE(c.ok());
  CHECK(c->width == 1920);

  auto coded = parse_video_tag(cat({hex("91"), str("hvc1"), hex("000028 0000000a")}));
  REQUIRE(coded.ok());
  CHECK(coded->is_keyframe());
  CHECK(coded->tracks.items[0].composition_time == 40);
  CHECK(coded->tracks.items[0].data_offset == 8);
  CHECK(coded->tracks.items[0].data_size == 4);

  auto codedx = parse_video_tag(cat({hex("a3"), str("hvc1"), hex("0000000a")}));
  REQUIRE(codedx.ok());
  CHECK_FALSE(codedx->is_keyframe());
  CHECK(codedx->frame_type == VideoFrameType::Inter);
  CHECK(codedx->tracks.items[0].composition_time == 0);
  CHECK(codedx->tracks.items[0].data_offset == 5);

  // AV1 CodedFrames carry no composition time.
  auto av1 = parse_video_tag(cat({hex("91"), str("av01"), hex("0a0b")}));
  REQUIRE(av1.ok());
  CHECK(av1->codec() == VideoCodec::Av1);
  CHECK(av1->tracks.items[0].data_offset == 5);

  // An unknown FourCC still parses (the message can be relayed); its codec is Unknown.
  auto unknown = parse_video_tag(cat({hex("91"), str("zzzz"), hex("00")}));
  REQUIRE(unknown.ok());
  CHECK(unknown->codec() == VideoCodec::Unknown);

  auto cmd = parse_video_tag(hex("d1 00"));
  REQUIRE(cmd.ok());
  CHECK(cmd->has_command);
  CHECK(cmd->tracks.total == 0);

  CHECK(parse_video_tag(cat({hex("91"), str("hvc")})).error().code == Errc::Truncated);
  CHECK(parse_video_tag(cat({hex("91"), str("hvc1"), hex("00")})).error().code == Errc::Truncated);
  CHECK(parse_video_tag(cat({hex("98"), str("hvc1")})).error().code == Errc::Unsupported);
}

TEST_CASE("E-RTMP video multitrack") {
  SUBCASE("OneTrack") {
    auto h = parse_video_tag(cat({hex("96 01"), str("avc1"), hex("02 000005 aabb")}));
    REQUIRE(h.ok());
    CHECK(h->multitrack);
    CHECK(h->multitrack_type == AvMultitrackType::OneTrack);
    CHECK(h->packet_type == VideoPacketType::CodedFrames);
    CHECK(h->is_keyframe());
    REQUIRE(h->tracks.total == 1);
    CHECK(h->tracks.items[0].id == 2);
    CHECK(h->tracks.items[0].fourcc == fourcc::kAvc1);
    CHECK(h->tracks.items[0].composition_time == 5);
    CHECK(h->tracks.items[0].data_offset == 10);
    CHECK(h->tracks.items[0].data_size == 2);
  }
  SUBCASE("ManyTracks") {
    const Bytes msg = cat({hex("a6 11"), str("hvc1"), hex("00"), be24(7), hex("000001 01020304"), hex("01"), be24(5),
                           hex("fffffe 0506")});
    auto h = parse_video_tag(msg);
    REQUIRE(h.ok());
    CHECK(h->multitrack_type == AvMultitrackType::ManyTracks);
    CHECK_FALSE(h->is_keyframe());
    REQUIRE(h->tracks.total == 2);
    CHECK(h->tracks.items[0].id == 0);
    CHECK(h->tracks.items[0].composition_time == 1);
    CHECK(h->tracks.items[0].data_offset == 13);
    CHECK(h->tracks.items[0].data_size == 4);
    CHECK(h->tracks.items[1].id == 1);
    CHECK(h->tracks.items[1].composition_time == -2);
    CHECK(h->tracks.items[1].data_offset == 24);
    CHECK(h->tracks.items[1].data_size == 2);
    CHECK(h->tracks.items[1].data_offset + 2 == msg.size());

    // Every sizeOfTrack is checked against what remains.
    Bytes lying = msg;
    lying[7] = 0x01;  // sizeOfTrack 0x010007
    CHECK(parse_video_tag(lying).error().code == Errc::Malformed);
    CHECK_FALSE(parse_video_tag(std::span(msg).first(msg.size() - 1)).ok());
  }
  SUBCASE("ManyTracksManyCodecs") {
    const Bytes msg =
        cat({hex("96 23"), str("avc1"), hex("00"), be24(2), hex("aabb"), str("av01"), hex("01"), be24(1), hex("cc")});
    auto h = parse_video_tag(msg);
    REQUIRE(h.ok());
    CHECK(h->packet_type == VideoPacketType::CodedFramesX);
    REQUIRE(h->tracks.total == 2);
    CHECK(h->tracks.items[0].fourcc == fourcc::kAvc1);
    CHECK(h->tracks.items[1].fourcc == fourcc::kAv01);
    CHECK(h->tracks.items[1].data_size == 1);
    CHECK(h->codec() == VideoCodec::Avc);
  }
  SUBCASE("more tracks than are stored are still all checked") {
    Bytes msg = cat({hex("96 13"), str("avc1")});
    for (uint8_t id = 0; id < 20; ++id) msg = cat({msg, Bytes{id}, be24(1), hex("ee")});
    auto h = parse_video_tag(msg);
    REQUIRE(h.ok());
    CHECK(h->tracks.total == 20);
    CHECK(h->tracks.stored == TrackList::kMaxStored);
  }
  SUBCASE("nested Multitrack is refused") {
    CHECK(parse_video_tag(cat({hex("96 06"), str("avc1"), hex("00")})).error().code == Errc::Malformed);
    CHECK(parse_video_tag(cat({hex("96 31"), str("avc1"), hex("00")})).error().code == Errc::Unsupported);
  }
}

TEST_CASE("E-RTMP ModEx") {
  SUBCASE("TimestampOffsetNano then CodedFrames") {
    auto h = parse_video_tag(cat({hex("97 02 0001f4 01"), str("hvc1"), hex("000000 aa")}));
    REQUIRE(h.ok());
    CHECK(h->timestamp_offset_nanos == 500);
    CHECK(h->packet_type == VideoPacketType::CodedFrames);
    CHECK(h->is_keyframe());
    CHECK(h->tracks.items[0].data_offset == 13);
  }
  SUBCASE("16-bit size and an unknown ModEx type are skipped, chained ModEx") {
    Bytes msg = cat({hex("97 ff"), be16(299), Bytes(300, 0x55), hex("57 02 0003e8 03"), str("av01"), hex("bb")});
    auto h = parse_video_tag(msg);
    REQUIRE(h.ok());
    CHECK(h->timestamp_offset_nanos == 1000);
    CHECK(h->packet_type == VideoPacketType::CodedFramesX);
    CHECK(h->tracks.items[0].data_size == 1);
  }
  SUBCASE("ModEx then Multitrack") {
    auto h = parse_video_tag(cat({hex("97 02 000001 06 00"), str("avc1"), hex("03 00")}));
    REQUIRE(h.ok());
    CHECK(h->multitrack);
    CHECK(h->tracks.items[0].id == 3);
  }
  SUBCASE("bad ModEx blocks") {
    CHECK(parse_video_tag(hex("97 05 0000")).error().code == Errc::Truncated);
    CHECK(parse_video_tag(hex("97")).error().code == Errc::Truncated);
    CHECK(parse_video_tag(cat({hex("97 00 00 01"), str("hvc1"), hex("000000")})).error().code == Errc::Malformed);
    CHECK(parse_video_tag(cat({hex("97 02 0f4240 01"), str("hvc1"), hex("000000")})).error().code == Errc::Malformed);
  }
}

TEST_CASE("audio tags: legacy and E-RTMP") {
  auto aac_seq = parse_audio_tag(hex("af 00 12 10"));
  REQUIRE(aac_seq.ok());
  CHECK(aac_seq->codec() == AudioCodec::Aac);
  CHECK(aac_seq->is_sequence_header());
  CHECK(aac_seq->tracks.items[0].data_offset == 2);

  auto aac_raw = parse_audio_tag(hex("af 01 21 00"));
  REQUIRE(aac_raw.ok());
  CHECK_FALSE(aac_raw->is_sequence_header());

  auto mp3 = parse_audio_tag(hex("2e ff fb"));
  REQUIRE(mp3.ok());
  CHECK(mp3->codec() == AudioCodec::Mp3);
  CHECK(mp3->legacy_rate_hz == 44100);
  CHECK(mp3->legacy_bits == 16);
  CHECK(mp3->legacy_channels == 1);
  CHECK(mp3->tracks.items[0].data_offset == 1);

  auto ex_seq = parse_audio_tag(cat({hex("90"), str("mp4a"), hex("12 10")}));
  REQUIRE(ex_seq.ok());
  CHECK(ex_seq->enhanced);
  CHECK(ex_seq->is_sequence_header());
  CHECK(ex_seq->codec() == AudioCodec::Aac);
  CHECK(ex_seq->tracks.items[0].data_offset == 5);

  auto opus = parse_audio_tag(cat({hex("91"), str("Opus"), hex("fc ff fe")}));
  REQUIRE(opus.ok());
  CHECK(opus->codec() == AudioCodec::Opus);

  const Bytes many = cat({hex("95 11"), str("mp4a"), hex("00"), be24(2), hex("2100"), hex("01"), be24(1), hex("21")});
  auto mt = parse_audio_tag(many);
  REQUIRE(mt.ok());
  CHECK(mt->multitrack);
  REQUIRE(mt->tracks.total == 2);
  CHECK(mt->tracks.items[1].id == 1);
  CHECK(mt->tracks.items[1].data_offset == many.size() - 1);

  auto modex = parse_audio_tag(cat({hex("97 00 aa 11"), str("Opus"), hex("00")}));
  REQUIRE(modex.ok());
  CHECK(modex->packet_type == AudioPacketType::CodedFrames);

  CHECK(parse_audio_tag(hex("af")).error().code == Errc::Truncated);
  CHECK(parse_audio_tag({}).error().code == Errc::Truncated);
  CHECK(parse_audio_tag(cat({hex("93"), str("mp4a")})).error().code == Errc::Unsupported);
  CHECK(parse_audio_tag(cat({hex("95 15"), str("mp4a")})).error().code == Errc::Unsupported);
  CHECK_FALSE(parse_audio_tag(cat({hex("95 11"), str("mp4a"), hex("00"), be24(9), hex("00")})).ok());
}

TEST_CASE("make_frame classifies once") {
  using namespace sluice::protocol;
  auto seq = make_frame(msg_type::kVideo, 0, Slice::copy_of(cat({hex("17 00 000000"), avc_record(kSps720)})));
  CHECK(seq->kind == FrameKind::Video);
  CHECK(seq->sequence_header);
  CHECK_FALSE(seq->keyframe);

  auto key = make_frame(msg_type::kVideo, 40, Slice::copy_of(hex("17 01 000000 00000001 65")));
  CHECK(key->keyframe);
  CHECK(key->timestamp == 40);
  CHECK_FALSE(key->sequence_header);

  auto track = make_frame(msg_type::kVideo, 0, Slice::copy_of(cat({hex("96 03"), str("avc1"), hex("02 aa")})));
  CHECK(track->track == 2);
  CHECK(track->keyframe);

  auto aac = make_frame(msg_type::kAudio, 0, Slice::copy_of(hex("af 00 12 10")));
  CHECK(aac->kind == FrameKind::Audio);
  CHECK(aac->sequence_header);

  auto silence = make_frame(msg_type::kAudio, 0, Slice());
  CHECK(silence->kind == FrameKind::Audio);
  CHECK_FALSE(silence->sequence_header);

  auto garbage = make_frame(msg_type::kVideo, 0, Slice::copy_of(hex("ff ff")));
  CHECK_FALSE(garbage->keyframe);
  CHECK_FALSE(garbage->sequence_header);
}

TEST_CASE("copy_frame: the same message over bytes of its own, without the owner's wire body") {
  using namespace sluice::protocol;
  // A sub-slice (as @setDataFrame re-slicing makes): the copy holds only the viewed bytes.
  Slice whole = Slice::copy_of(cat({hex("00 00"), hex("96 03"), str("avc1"), hex("02 aa")}));
  auto f = make_frame(msg_type::kVideo, 1234, whole.share(2, whole.size() - 2));
  auto* owner = const_cast<Frame*>(f.get());
  owner->wire_cache = Slice::copy_of(hex("01 02 03"));
  owner->wire_cache_key = 77;
  auto c = copy_frame(*f);
  CHECK(c->kind == f->kind);
  CHECK(c->rtmp_type == msg_type::kVideo);
  CHECK(c->timestamp == 1234);
  CHECK(c->keyframe == f->keyframe);
  CHECK(c->sequence_header == f->sequence_header);
  CHECK(c->metadata == f->metadata);
  CHECK(c->track == 2);
  CHECK(std::vector<uint8_t>(c->payload.span().begin(), c->payload.span().end()) ==
        std::vector<uint8_t>(f->payload.span().begin(), f->payload.span().end()));
  CHECK(c->payload.data() != f->payload.data());  // its own bytes: no reference shared with the owner
  CHECK(c->payload.use_count() == 1);
  CHECK(whole.use_count() == 2);  // the owner's buffer: `whole` and f's payload, nothing of the copy
  CHECK(c->wire_cache.empty());   // built by the copy's own players
  CHECK(c->wire_cache_key == 0);

  auto meta = make_frame(msg_type::kDataAmf0, 0, Slice::copy_of(cat({hex("02 000a"), str("onMetaData"), hex("05")})));
  CHECK(copy_frame(*meta)->metadata == meta->metadata);
}

TEST_CASE("CodecInfo learns from sequence headers") {
  using namespace sluice::protocol;
  CodecInfo info;
  CHECK(info.summary() == "none");
  info.update(*make_frame(msg_type::kVideo, 0, Slice::copy_of(cat({hex("17 00 000000"), avc_record(kSps720)}))));
  info.update(*make_frame(msg_type::kAudio, 0, Slice::copy_of(hex("af 00 12 10"))));
  CHECK(info.video_codec == "H264");
  CHECK(info.width == 1280);
  CHECK(info.height == 720);
  CHECK(info.sample_rate == 44100);
  CHECK(info.channels == 2);
  CHECK(info.summary() == "video=H264 High@3.1 1280x720 audio=AAC-LC 44100Hz 2ch");

  CodecInfo hevc;
  hevc.update(*make_frame(msg_type::kVideo, 0, Slice::copy_of(cat({hex("90"), str("hvc1"), hevc_record()}))));
  hevc.update(*make_frame(msg_type::kAudio, 0, Slice::copy_of(hex("2e ff fb"))));
  CHECK(hevc.summary() == "video=HEVC Main@4 1920x1080 audio=MP3 44100Hz 1ch");

  // Non-default tracks do not change the summary.
  CodecInfo tracks;
  tracks.update(*make_frame(msg_type::kVideo, 0,
                            Slice::copy_of(cat({hex("96 00"), str("avc1"), hex("01"), avc_record(kSps720)}))));
  CHECK_FALSE(tracks.has_video());
}
